import { createHash } from 'node:crypto';

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** RFC 4122 name-based UUID (version 5, SHA-1). */
export function uuidv5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** RFC 4122's URL namespace: the names below are `oan:`-prefixed, so it cannot clash. */
const OAN_ACCOUNT_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * Deterministic account id: two concurrent first logins of one email append to the same stream,
 * and its optimistic concurrency leaves exactly one `AccountRegistered` (decided on the write side).
 */
export const accountIdForEmail = (email: string) =>
  uuidv5(`oan:${normalizeEmail(email)}`, OAN_ACCOUNT_NAMESPACE);

/** Pairing codes are hex; accept what a human retypes in upper case or with stray spaces. */
export const pairingCodeHash = (code: string) => sha256Hex(code.trim().toLowerCase());

export const accountStream = (accountId: string) => `account-${accountId}`;
export const pairingCodeStream = (codeHash: string) => `pairing-code-${codeHash}`;
