import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { forbidden, HttpError, unauthorized } from '@oan/http';
import { ErrorCodes, ErrorKeys, OAN_REALM, type ApiKeyPermission } from '@oan/protocol';
import { isApiKey } from './apiKey.ts';
import { AuthError, type AuthenticatedPrincipal, type Authenticator } from './authenticator.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireAuth`; absent on routes without it. */
    principal?: AuthenticatedPrincipal;
  }
}

/**
 * The auth kinds of the routes. `multi+realm`: OAN JWT or API key; `jwt-strict`: OAN JWT only (a key is a
 * 401); `multi-open`: JWT of either realm or API key.
 */
export type AuthMode = 'multi+realm' | 'jwt-strict' | 'multi-open';

export interface RequireAuthOptions {
  mode: AuthMode;
  /** Needed by an API key (the route's permission; a key without it is 403); JWTs act as the account itself. */
  permission?: ApiKeyPermission;
  /**
   * Read-only event history stays readable for a banned account, so a connector whose cursor precedes
   * the `account_banned` notice sees it on backfill and stops (docs/adr/0008).
   */
  allowBanned?: boolean;
}

// every refusal text contains Unauthorized/Forbidden/banned so connectors stop retrying.
const TEXTS = {
  invalidApiKey: 'Unauthorized: invalid API key',
  invalidToken: 'Unauthorized: invalid token',
  realmNotAllowed: 'Unauthorized: realm not allowed',
  banned: 'Forbidden: account banned',
} as const;

export const realmNotAllowed = () => new HttpError(403, ErrorCodes.forbidden, ErrorKeys.realmNotAllowed);
export const accountBanned = () => forbidden(TEXTS.banned);

/** `Authorization: Bearer <credential>`; anything else is no credential at all. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * An onRequest hook that authenticates the request, applies the mode's rules and sets
 * `req.principal`: credentials are checked before the body is parsed or validated (a missing or
 * bad credential is a 401 whatever else is wrong with the request).
 */
export function requireAuth(
  authenticator: Authenticator,
  opts: RequireAuthOptions,
): onRequestAsyncHookHandler {
  const gated = opts.mode !== 'multi-open';
  return async function authHook(req: FastifyRequest, _reply: FastifyReply) {
    const token = bearerToken(req.headers.authorization);
    if (token === null) throw unauthorized();
    if (opts.mode === 'jwt-strict' && isApiKey(token)) {
      throw unauthorized('Unauthorized: API keys cannot be used here');
    }
    let principal: AuthenticatedPrincipal;
    try {
      principal = await authenticator.authenticate(token, gated ? { requireRealm: OAN_REALM } : {});
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      if (err.reason === 'realmNotAllowed') throw realmNotAllowed();
      throw unauthorized(TEXTS[err.reason]);
    }
    if (principal.banned && !opts.allowBanned) throw accountBanned(); // 403 'Forbidden: account banned' on every authenticated route
    if (opts.permission && principal.via === 'apiKey' && !principal.permissions.includes(opts.permission)) {
      throw forbidden(`Forbidden: API key lacks permission ${opts.permission}`);
    }
    req.principal = principal;
  };
}

/** `req.principal` on a route guarded by `requireAuth`; a missing one is a wiring bug, refused as 401. */
export function principalOf(req: FastifyRequest): AuthenticatedPrincipal {
  if (!req.principal) throw unauthorized();
  return req.principal;
}

/**
 * The `/oan` handshake check (credential, realm, account, ban): returns the principal or throws an Error whose message
 * is one of the four handshake rejection texts, ready to pass to the Socket.IO middleware callback.
 */
export async function authenticateSocketToken(
  authenticator: Authenticator,
  token: unknown,
): Promise<AuthenticatedPrincipal> {
  if (typeof token !== 'string' || token === '') throw new Error(TEXTS.invalidToken);
  let principal: AuthenticatedPrincipal;
  try {
    principal = await authenticator.authenticate(token, { requireRealm: OAN_REALM });
  } catch (err) {
    if (err instanceof AuthError) throw new Error(TEXTS[err.reason]);
    throw err;
  }
  if (principal.banned) throw new Error(TEXTS.banned);
  return principal;
}
