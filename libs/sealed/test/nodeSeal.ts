import {
  createCipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { SealedEnvelope } from '@oan/sealed';

/**
 * A third implementation of sealing, on node:crypto (OpenSSL), written from the steps of
 * docs/sealed-messages.md alone: it checks the documented vector, and seals plaintexts the library
 * would refuse to write, to see that readers refuse them.
 */

export const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');

export const privateKeyObject = (raw: Uint8Array) =>
  createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), raw]),
    format: 'der',
    type: 'pkcs8',
  });

export const rawPublicKey = (key: KeyObject) =>
  new Uint8Array(Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url'));

const publicKeyObject = (raw: Uint8Array) =>
  createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: b64u(raw) }, format: 'jwk' });

const gcm = (key: Uint8Array, nonce: Uint8Array, data: Uint8Array, aad?: Uint8Array) => {
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  if (aad) cipher.setAAD(aad);
  return new Uint8Array(Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()]));
};

export interface NodeSealInput {
  plaintext: Uint8Array;
  conversationId: string;
  senderAccountId: string;
  recipients: { accountId: string; keyId: string; publicKey: Uint8Array }[];
  /** e, K, N, then one nonce per recipient; fresh random bytes when left out. */
  draws?: Uint8Array[];
}

export function nodeSeal(input: NodeSealInput) {
  const sizes = [32, 32, 12, ...input.recipients.map(() => 12)];
  const [e, K, N, ...nonces] = input.draws ?? sizes.map((n) => new Uint8Array(randomBytes(n)));
  const ephemeral = privateKeyObject(e!);
  const E = rawPublicKey(ephemeral);
  const aad = `oan-sealed-v1\n${b64u(E)}\n${input.conversationId}\n${input.senderAccountId}`;
  const wraps = input.recipients.map(({ accountId, keyId, publicKey: P }, i) => {
    const shared = diffieHellman({ privateKey: ephemeral, publicKey: publicKeyObject(P) });
    const info = `oan-sealed-v1 wrap\n${accountId}\n${keyId}`;
    const wrapKey = new Uint8Array(hkdfSync('sha256', shared, Buffer.concat([E, P]), info, 32));
    const nonce = nonces[i]!;
    const entry = { accountId, keyId, nonce: b64u(nonce), wrappedKey: b64u(gcm(wrapKey, nonce, K!)) };
    return { shared: shared.toString('hex'), info, wrapKey: Buffer.from(wrapKey).toString('hex'), entry };
  });
  const envelope: SealedEnvelope = {
    alg: 'oan-sealed-v1',
    ephemeralKey: b64u(E),
    nonce: b64u(N!),
    ciphertext: b64u(gcm(K!, N!, input.plaintext, new TextEncoder().encode(aad))),
    recipients: wraps.map((w) => w.entry),
  };
  return {
    envelope,
    ephemeralKey: b64u(E),
    aad,
    wraps: wraps.map(({ shared, info, wrapKey }) => ({ shared, info, wrapKey })),
  };
}
