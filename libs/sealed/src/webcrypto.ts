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
 * `oan-sealed-v1` on the platform's WebCrypto alone (`globalThis.crypto.subtle`: X25519, HKDF,
 * AES-GCM), so it runs unchanged in Node 24 and in a browser bundle. Private keys are CryptoKeys
 * that cannot be exported.
 */

export type WebCryptoKey = Awaited<ReturnType<typeof globalThis.crypto.subtle.importKey>>;

const X25519 = { name: 'X25519' } as const;
const AES_GCM = { name: 'AES-GCM', length: 256 } as const;
// RFC 8410's PrivateKeyInfo for X25519 around the 32 raw bytes: WebCrypto imports a private X25519
// key as PKCS#8 or as a JWK, and a JWK would need the public half, which is what we want to learn.
const PKCS8_X25519_PREFIX = new Uint8Array([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
]);
// u = 9, the curve's base point: X25519(k, 9) is k's public key (RFC 7748 §6.1).
const BASE_POINT = new Uint8Array(X25519_KEY_BYTES);
BASE_POINT[0] = 9;

const subtle = () => globalThis.crypto.subtle;
/** A copy on its own ArrayBuffer, as WebCrypto's BufferSource types want. */
const own = (bytes: Uint8Array) => new Uint8Array(bytes);

async function importPrivateKey(raw: Uint8Array, extractable = false): Promise<WebCryptoKey> {
  const pkcs8 = new Uint8Array(PKCS8_X25519_PREFIX.length + raw.length);
  pkcs8.set(PKCS8_X25519_PREFIX);
  pkcs8.set(raw, PKCS8_X25519_PREFIX.length);
  return subtle().importKey('pkcs8', pkcs8, X25519, extractable, ['deriveBits']);
}

async function x25519(privateKey: WebCryptoKey, publicKey: Uint8Array): Promise<Uint8Array> {
  const peer = await subtle().importKey('raw', own(publicKey), X25519, true, []);
  const shared = new Uint8Array(await subtle().deriveBits({ name: 'X25519', public: peer }, privateKey, 256));
  // WebCrypto refuses an all-zero result itself; checked again because the contract depends on it.
  if (isAllZero(shared)) throw new Error('X25519 gave the all-zero secret');
  return shared;
}

/** Works on a non-extractable key: the public half is X25519 of the key and the base point. */
const publicKeyOf = (privateKey: WebCryptoKey) => x25519(privateKey, BASE_POINT);

async function wrapKey(
  shared: Uint8Array,
  ephemeralKey: Uint8Array,
  publicKey: Uint8Array,
  accountId: string,
  keyId: string,
  usage: 'encrypt' | 'decrypt',
): Promise<WebCryptoKey> {
  const salt = new Uint8Array(2 * X25519_KEY_BYTES);
  salt.set(ephemeralKey);
  salt.set(publicKey, X25519_KEY_BYTES);
  const ikm = await subtle().importKey('raw', own(shared), 'HKDF', false, ['deriveKey']);
  const hkdf = { name: 'HKDF', hash: 'SHA-256', salt, info: wrapInfo(accountId, keyId) };
  return subtle().deriveKey(hkdf, ikm, AES_GCM, false, [usage]);
}

async function aesGcm(
  usage: 'encrypt' | 'decrypt',
  key: WebCryptoKey,
  iv: Uint8Array,
  data: Uint8Array,
  additionalData?: Uint8Array,
): Promise<Uint8Array> {
  const params = {
    name: 'AES-GCM',
    iv: own(iv),
    ...(additionalData && { additionalData: own(additionalData) }),
  };
  const out =
    usage === 'encrypt'
      ? await subtle().encrypt(params, key, own(data))
      : await subtle().decrypt(params, key, own(data));
  return new Uint8Array(out);
}

async function generateDeviceKey(): Promise<DeviceKeyPair<WebCryptoKey>> {
  const pair = (await subtle().generateKey(X25519, false, ['deriveBits'])) as {
    privateKey: WebCryptoKey;
    publicKey: WebCryptoKey;
  };
  return {
    privateKey: pair.privateKey,
    publicKey: new Uint8Array(await subtle().exportKey('raw', pair.publicKey)),
  };
}

async function importDeviceKey(rawPrivateKey: Uint8Array): Promise<DeviceKeyPair<WebCryptoKey>> {
  checkKeyBytes(rawPrivateKey, 'a raw private key');
  const privateKey = await importPrivateKey(rawPrivateKey);
  return { privateKey, publicKey: await publicKeyOf(privateKey) };
}

async function seal(content: SealedContent, options: SealOptions): Promise<SealedEnvelope> {
  checkSealOptions(options);
  const plaintext = plaintextOf(content);
  const draw = randomSource(options.random);
  const ephemeral = await importPrivateKey(draw(X25519_KEY_BYTES));
  const ephemeralKey = await publicKeyOf(ephemeral);
  const contentKey = draw(CONTENT_KEY_BYTES);
  const nonce = draw(GCM_NONCE_BYTES);
  const aesKey = await subtle().importKey('raw', own(contentKey), 'AES-GCM', false, ['encrypt']);
  const aad = contentAad(toBase64url(ephemeralKey), options.conversationId, options.senderAccountId);
  const ciphertext = await aesGcm('encrypt', aesKey, nonce, plaintext, aad);
  const recipients = [];
  for (const { accountId, keyId, publicKey } of options.recipients) {
    const shared = await x25519(ephemeral, publicKey).catch(() => {
      throw new SealedInputError(`the public key of ${keyId} is a low-order point`);
    });
    const key = await wrapKey(shared, ephemeralKey, publicKey, accountId, keyId, 'encrypt');
    const wrapNonce = draw(GCM_NONCE_BYTES);
    const wrapped = await aesGcm('encrypt', key, wrapNonce, contentKey);
    recipients.push({ accountId, keyId, nonce: toBase64url(wrapNonce), wrappedKey: toBase64url(wrapped) });
  }
  return {
    alg: SEALED_ALG,
    ephemeralKey: toBase64url(ephemeralKey),
    nonce: toBase64url(nonce),
    ciphertext: toBase64url(ciphertext),
    recipients,
  };
}

async function open(envelope: unknown, options: OpenOptions<WebCryptoKey>) {
  checkOpenOptions(options);
  const { privateKey } = options;
  if (
    !(privateKey instanceof CryptoKey) ||
    privateKey.type !== 'private' ||
    privateKey.algorithm.name !== 'X25519'
  ) {
    throw new SealedInputError('privateKey must be a private X25519 CryptoKey');
  }
  const parts = readerParts(envelope, options.myAccountId, options.keyId);
  let plaintext: Uint8Array;
  try {
    const shared = await x25519(privateKey, parts.ephemeralKey);
    const publicKey = await publicKeyOf(privateKey);
    const key = await wrapKey(
      shared,
      parts.ephemeralKey,
      publicKey,
      options.myAccountId,
      options.keyId,
      'decrypt',
    );
    const contentKey = await aesGcm('decrypt', key, parts.wrapNonce, parts.wrappedKey);
    const aesKey = await subtle().importKey('raw', own(contentKey), 'AES-GCM', false, ['decrypt']);
    const aad = contentAad(parts.ephemeralKeyText, options.conversationId, options.senderAccountId);
    plaintext = await aesGcm('decrypt', aesKey, parts.nonce, parts.ciphertext, aad);
  } catch {
    throw new SealedOpenError();
  }
  return contentOf(plaintext);
}

async function fingerprint(publicKey: Uint8Array): Promise<string> {
  const digest = await subtle().digest('SHA-256', own(checkKeyBytes(publicKey)));
  return fingerprintText(new Uint8Array(digest));
}

export const webcryptoSealer: Sealer<WebCryptoKey> = {
  generateDeviceKey,
  importDeviceKey,
  seal,
  open,
  fingerprint,
};
