import { gcm } from '@noble/ciphers/aes.js';
import { x25519 as curve } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { toBase64url } from './encoding.ts';
import { SealedInputError, SealedOpenError } from './errors.ts';
import {
  CONTENT_KEY_BYTES,
  type DeviceKeyPair,
  type OpenOptions,
  type SealOptions,
  type Sealer,
  type SealedContent,
  checkOpenOptions,
  checkKeyBytes,
  checkSealOptions,
  contentAad,
  contentOf,
  fingerprintText,
  isAllZero,
  plaintextOf,
  randomSource,
  readerParts,
  wrapInfo,
} from './format.ts';
import { GCM_NONCE_BYTES, SEALED_ALG, X25519_KEY_BYTES, type SealedEnvelope } from './shape.ts';

/**
 * `oan-sealed-v1` in plain JavaScript (@noble/curves, @noble/ciphers, @noble/hashes): for a
 * runtime without WebCrypto's X25519, and as the second implementation the first is tested
 * against. A private key is its 32 raw bytes.
 */

function x25519(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  // noble throws on the all-zero result itself; checked again because the contract depends on it.
  const shared = curve.getSharedSecret(privateKey, publicKey);
  if (isAllZero(shared)) throw new Error('X25519 gave the all-zero secret');
  return shared;
}

const wrapKey = (
  shared: Uint8Array,
  ephemeralKey: Uint8Array,
  publicKey: Uint8Array,
  accountId: string,
  keyId: string,
) => hkdf(sha256, shared, concatBytes(ephemeralKey, publicKey), wrapInfo(accountId, keyId), 32);

async function generateDeviceKey(): Promise<DeviceKeyPair<Uint8Array>> {
  const { secretKey, publicKey } = curve.keygen();
  return { privateKey: secretKey, publicKey };
}

async function importDeviceKey(rawPrivateKey: Uint8Array): Promise<DeviceKeyPair<Uint8Array>> {
  const privateKey = Uint8Array.from(checkKeyBytes(rawPrivateKey, 'a raw private key'));
  return { privateKey, publicKey: curve.getPublicKey(privateKey) };
}

async function seal(content: SealedContent, options: SealOptions): Promise<SealedEnvelope> {
  checkSealOptions(options);
  const plaintext = plaintextOf(content);
  const draw = randomSource(options.random);
  const ephemeral = draw(X25519_KEY_BYTES);
  const ephemeralKey = curve.getPublicKey(ephemeral);
  const contentKey = draw(CONTENT_KEY_BYTES);
  const nonce = draw(GCM_NONCE_BYTES);
  const aad = contentAad(toBase64url(ephemeralKey), options.conversationId, options.senderAccountId);
  const ciphertext = gcm(contentKey, nonce, aad).encrypt(plaintext);
  const recipients = options.recipients.map(({ accountId, keyId, publicKey }) => {
    let shared: Uint8Array;
    try {
      shared = x25519(ephemeral, publicKey);
    } catch {
      throw new SealedInputError(`the public key of ${keyId} is a low-order point`);
    }
    const key = wrapKey(shared, ephemeralKey, publicKey, accountId, keyId);
    const wrapNonce = draw(GCM_NONCE_BYTES);
    const wrapped = gcm(key, wrapNonce).encrypt(contentKey);
    return { accountId, keyId, nonce: toBase64url(wrapNonce), wrappedKey: toBase64url(wrapped) };
  });
  return {
    alg: SEALED_ALG,
    ephemeralKey: toBase64url(ephemeralKey),
    nonce: toBase64url(nonce),
    ciphertext: toBase64url(ciphertext),
    recipients,
  };
}

async function open(envelope: unknown, options: OpenOptions<Uint8Array>): Promise<SealedContent> {
  checkOpenOptions(options);
  const privateKey = checkKeyBytes(options.privateKey, 'privateKey');
  const parts = readerParts(envelope, options.myAccountId, options.keyId);
  let plaintext: Uint8Array;
  try {
    const shared = x25519(privateKey, parts.ephemeralKey);
    const publicKey = curve.getPublicKey(privateKey);
    const key = wrapKey(shared, parts.ephemeralKey, publicKey, options.myAccountId, options.keyId);
    const contentKey = gcm(key, parts.wrapNonce).decrypt(parts.wrappedKey);
    const aad = contentAad(parts.ephemeralKeyText, options.conversationId, options.senderAccountId);
    plaintext = gcm(contentKey, parts.nonce, aad).decrypt(parts.ciphertext);
  } catch {
    throw new SealedOpenError();
  }
  return contentOf(plaintext);
}

async function fingerprint(publicKey: Uint8Array): Promise<string> {
  return fingerprintText(sha256(checkKeyBytes(publicKey)));
}

export const nobleSealer: Sealer<Uint8Array> = {
  generateDeviceKey,
  importDeviceKey,
  seal,
  open,
  fingerprint,
};
