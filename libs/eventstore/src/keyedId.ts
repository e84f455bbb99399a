import { createHmac } from 'node:crypto';

/**
 * A deterministic id that says nothing of its input to whoever lacks the secret: the first 128 bits
 * of HMAC-SHA256(secret, purpose ‖ 0x00 ‖ input), stamped as an RFC 9562 UUIDv8 (the version for
 * ids built by a method of one's own; v4 would claim randomness and v5 a public SHA-1 of a name).
 * The same input under the same secret is the same id, so a retried or racing command lands on the
 * same stream; `purpose` keeps two kinds of id apart even for one input.
 */
export function keyedUuid(secret: string, purpose: string, input: string): string {
  if (purpose.includes('\0')) throw new Error('an id purpose has no NUL character');
  const bytes = createHmac('sha256', secret).update(purpose).update('\0').update(input, 'utf8').digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
