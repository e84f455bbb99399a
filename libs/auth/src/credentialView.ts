import { sql, type EntityManager } from '@oan/db';

/**
 * The queries other services may run on the credential view (`auth.accounts`, `auth.api_keys`,
 * ADR 0006): the auth service writes it in the same transaction as its commands, so what these
 * answer holds from the moment the command answered. Nothing outside libs/auth reads the view's SQL.
 */

/** The platform the account registered with, or null for an unknown account. */
export async function registeredPlatformOf(em: EntityManager, accountId: string): Promise<string | null> {
  const [row] = await sql<{ source_platform: string }>(
    em,
    'select source_platform from auth.accounts where id = ?',
    [accountId],
  );
  return row?.source_platform ?? null;
}

export interface CredentialCheck {
  /** Of the accounts asked about, those banned longer ago than the grace. */
  banned: Set<string>;
  /** Of the API keys asked about, those still valid (not revoked, not expired). */
  liveKeys: Set<string>;
}

/**
 * One statement for a sweep of open sockets: which of `accountIds` are banned (for more than
 * `banGraceMs`, so the ban's own notice is delivered first when it can be) and which of `apiKeyIds`
 * still exist unexpired.
 */
export async function checkCredentials(
  em: EntityManager,
  accountIds: readonly string[],
  apiKeyIds: readonly string[],
  banGraceMs: number,
): Promise<CredentialCheck> {
  const rows = await sql<{ kind: 'banned' | 'key'; id: string }>(
    em,
    `select 'banned' as kind, id from auth.accounts
      where id in (select value from jsonb_array_elements_text(?::jsonb))
        and banned_at < now() - make_interval(secs => ?::float8 / 1000)
     union all
     select 'key', id::text from auth.api_keys
      where id::text in (select value from jsonb_array_elements_text(?::jsonb))
        and (expires_at is null or expires_at > now())`,
    [JSON.stringify(accountIds), banGraceMs, JSON.stringify(apiKeyIds)],
  );
  return {
    banned: new Set(rows.filter((r) => r.kind === 'banned').map((r) => r.id)),
    liveKeys: new Set(rows.filter((r) => r.kind === 'key').map((r) => r.id)),
  };
}

/**
 * A filter another owner's query may add: true when the account named by `column` is not banned.
 * The ban is in the view from its own transaction on, so a query with it never pairs a banned account.
 */
export const notBanned = (column: string): string =>
  `not exists (select 1 from auth.accounts banned where banned.id = ${column} and banned.banned_at is not null)`;

/** Of `accountIds`, those banned (at once: the ban writes the view in its own transaction). */
export async function bannedAmong(em: EntityManager, accountIds: readonly string[]): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set();
  const rows = await sql<{ id: string }>(
    em,
    `select id from auth.accounts
      where id in (select value from jsonb_array_elements_text(?::jsonb)) and banned_at is not null`,
    [JSON.stringify(accountIds)],
  );
  return new Set(rows.map((r) => r.id));
}
