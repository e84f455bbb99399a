import { createPublicKey, verify } from 'node:crypto';

/**
 * Ed25519 verification of `message` (UTF-8) by the agent `address` (the address is the raw
 * public key). Never throws: a malformed key or signature is simply not valid.
 */
export function verifyBy(address: string, message: string, signatureHex: string): boolean {
  try {
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(address.slice(2), 'hex').toString('base64url') },
      format: 'jwk',
    });
    return verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}
