import { createHash, createPublicKey, diffieHellman, generateKeyPairSync } from 'node:crypto';

/**
 * What the server derives from a device key's bytes (docs/sealed-messages.md), with Node's crypto
 * (OpenSSL): its fingerprint, and whether it is a usable X25519 public key at all.
 */

/** Lower-case hex of the first 20 bytes of SHA-256 over the raw key, in ten groups of four. */
export function fingerprintOf(publicKey: string): string {
  const hex = createHash('sha256').update(Buffer.from(publicKey, 'base64url')).digest('hex').slice(0, 40);
  return hex.match(/.{4}/g)!.join(' ');
}

/** A key pair of this process's own, only ever used to test keys we are given. */
const probe = generateKeyPairSync('x25519').privateKey;

/**
 * A low-order point (the all-zero key, the other small-order points and their non-canonical
 * encodings, the top bit ignored as X25519 ignores it) makes every shared secret all zero, so
 * whoever seals to it seals to nobody. RFC 7748 §6.1's check: OpenSSL refuses to derive an all-zero
 * secret, which is what a key of this process's own shows for any such point.
 */
export function isLowOrderPoint(publicKey: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: publicKey }, format: 'jwk' });
    return diffieHellman({ privateKey: probe, publicKey: key }).every((b) => b === 0);
  } catch {
    return true;
  }
}
