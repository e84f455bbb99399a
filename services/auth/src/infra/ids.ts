import { createHash } from 'node:crypto';
import { sql, type EntityManager } from '@oan/db';
import { keyedUuid } from '@oan/eventstore';

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * The id a new account gets: keyed by the deployment's ID_SECRET, so two concurrent first logins
 * of one email append to the same stream (its optimistic concurrency leaves one
 * `AccountRegistered`), yet nobody without the secret can tell an email from the id a counterpart sees.
 */
export const accountIdForEmail = (secret: string, email: string) =>
  keyedUuid(secret, 'oan/account-id/v1', normalizeEmail(email));

/**
 * The id of the account already registered under this email, if any. Accounts registered before ids
 * were keyed carry a UUIDv5 of the email; they keep it (their events name it), and this lookup in the
 * credential view, written in the registration's own transaction, finds them by email.
 */
export async function registeredAccountId(em: EntityManager, email: string): Promise<string | null> {
  const [row] = await sql<{ id: string }>(
    em,
    `select id from auth.accounts where realm = 'oan' and lower(email) = ?`,
    [normalizeEmail(email)],
  );
  return row?.id ?? null;
}

/** Pairing codes are hex; accept what a human retypes in upper case or with stray spaces. */
export const pairingCodeHash = (code: string) => sha256Hex(code.trim().toLowerCase());

export const accountStream = (accountId: string) => `account-${accountId}`;
export const pairingCodeStream = (codeHash: string) => `pairing-code-${codeHash}`;
