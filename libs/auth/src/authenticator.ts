import { sql, type MikroORM } from '@oan/db';
import { hashApiKey, isApiKey } from './apiKey.ts';
import { InvalidJwtError, verifyJwt } from './jwt.ts';

export type Principal =
  | { accountId: string; via: 'jwt'; realm: string; expiresAt: number }
  | { accountId: string; via: 'apiKey'; apiKeyId: string; permissions: string[] };

/**
 * A principal plus the account's ban flag (callers decide what a ban forbids) and the
 * platform it registered with (what its Gofers inherit), read in the same lookup.
 */
export type AuthenticatedPrincipal = Principal & { banned: boolean; sourcePlatform: string };

export type AuthFailure = 'invalidApiKey' | 'invalidToken' | 'realmNotAllowed';

/** Why a credential was refused; the hooks and the socket gateway map it to their wire forms. */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  readonly reason: AuthFailure;
  constructor(reason: AuthFailure) {
    super(reason);
    this.reason = reason;
  }
}

export interface AuthenticateOptions {
  /**
   * Refuse JWTs of another realm before the account is looked up, so a `gofers` token gets the
   * realm error whether or not its subject exists here; the account row's realm
   * must match too. API keys have no realm check.
   */
  requireRealm?: string;
}

export interface Authenticator {
  authenticate(token: string, opts?: AuthenticateOptions): Promise<AuthenticatedPrincipal>;
  /** Resolves once the pending `last_used_at` writes are done (graceful close, tests). */
  drain(): Promise<void>;
}

export interface AuthenticatorOptions {
  orm: MikroORM;
  jwtSecret: string;
  /** Where a failed background `last_used_at` write is reported. */
  onBackgroundError?: (err: unknown) => void;
}

/** A JWT without a `realm` claim counts as realm `gofers`. */
export const LEGACY_REALM = 'gofers';

interface KeyRow {
  id: string;
  account_id: string;
  permissions: string[];
  /** `last_used_at` is unset or over a minute old (by the database clock). */
  stale: boolean;
  realm: string;
  banned_at: Date | string | null;
  source_platform: string;
}

interface AccountRow {
  id: string;
  realm: string;
  banned_at: Date | string | null;
  source_platform: string;
}

/**
 * Resolves a bearer credential against the credential tables on every call: no cache, so a revoked
 * key or a ban is refused by every process from the next request on.
 */
export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  const pending = new Set<Promise<void>>();

  const touch = (row: KeyRow) => {
    if (!row.stale) return;
    // Fire and forget: the request never waits for it. The `where` keeps it to one write a minute
    // per key even when several processes see the same stale value.
    const p = sql(
      opts.orm.em.fork(),
      `update auth.api_keys set last_used_at = now()
        where id = ? and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
      [row.id],
    )
      .then(() => undefined)
      .catch((err: unknown) => opts.onBackgroundError?.(err))
      .finally(() => pending.delete(p));
    pending.add(p);
  };

  const byApiKey = async (token: string): Promise<AuthenticatedPrincipal> => {
    const [row] = await sql<KeyRow>(
      opts.orm.em.fork(),
      `select k.id, k.account_id, k.permissions, a.realm, a.banned_at, a.source_platform,
              (k.last_used_at is null or k.last_used_at < now() - interval '1 minute') as stale
         from auth.api_keys k join auth.accounts a on a.id = k.account_id
        where k.key_hash = ? and (k.expires_at is null or k.expires_at > now())`,
      [hashApiKey(token)],
    );
    if (!row) throw new AuthError('invalidApiKey');
    touch(row);
    return {
      accountId: row.account_id,
      via: 'apiKey',
      apiKeyId: row.id,
      permissions: row.permissions,
      banned: row.banned_at !== null,
      sourcePlatform: row.source_platform,
    };
  };

  const byJwt = async (token: string, requireRealm?: string): Promise<AuthenticatedPrincipal> => {
    let claims;
    try {
      claims = await verifyJwt(opts.jwtSecret, token);
    } catch (err) {
      if (err instanceof InvalidJwtError) throw new AuthError('invalidToken');
      throw err;
    }
    const realm = claims.realm ?? LEGACY_REALM;
    if (requireRealm !== undefined && realm !== requireRealm) throw new AuthError('realmNotAllowed');
    const [row] = await sql<AccountRow>(
      opts.orm.em.fork(),
      'select id, realm, banned_at, source_platform from auth.accounts where id = ?',
      [claims.sub],
    );
    if (!row) throw new AuthError('invalidToken');
    if (requireRealm !== undefined && row.realm !== requireRealm) throw new AuthError('realmNotAllowed');
    return {
      accountId: row.id,
      via: 'jwt',
      realm,
      // Epoch milliseconds of the token's `exp` (verifyJwt refuses a token without one).
      expiresAt: (claims.exp ?? 0) * 1000,
      banned: row.banned_at !== null,
      sourcePlatform: row.source_platform,
    };
  };

  return {
    authenticate: (token, authOpts = {}) =>
      isApiKey(token) ? byApiKey(token) : byJwt(token, authOpts.requireRealm),
    drain: async () => {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
