import { createHash } from 'node:crypto';

/**
 * How account ids were derived before they were keyed (RFC 4122 UUIDv5 of the email under a public
 * namespace): accounts registered then keep these ids, and the tests recreate them with it.
 */
export function legacyAccountIdForEmail(email: string): string {
  const ns = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');
  const name = `oan:${email.trim().toLowerCase()}`;
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
