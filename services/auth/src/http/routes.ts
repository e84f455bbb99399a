import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  INTERNAL_CALL_HEADER,
  isInternalCall,
  principalOf,
  requireAuth,
  signOanJwt,
  type Authenticator,
} from '@oan/auth';
import { clientKey, noContent, unauthorized } from '@oan/http';
import { normalizePlatform } from '@oan/protocol';
import { listApiKeys, revokeApiKey } from '../commands/apiKeys.ts';
import { noticeOutdatedConnector, noticeRuntimeJobWaiting } from '../commands/accountAdmin.ts';
import type { AuthContext } from '../commands/context.ts';
import { checkEmailCode, requestEmailCode, type EmailSignInDeps } from '../commands/emailSignIn.ts';
import { issuePairingCode, redeemPairingCode } from '../commands/pairingCodes.ts';
import { signIn, type AccountView, type SignInContext } from '../commands/signIn.ts';
import { isDomainError, RejectedError } from '../domain/errors.ts';
import type { FailedAttemptLimiter } from '../infra/failedAttempts.ts';
import type { GoogleVerifier } from '../infra/google.ts';
import type { RequestLimiter } from '../infra/requestLimiter.ts';
import type { RevocationPublisher } from '../infra/push.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';

export interface RouteDeps {
  ctx: SignInContext;
  authenticator: Authenticator;
  email: EmailSignInDeps;
  /** `null` when GOOGLE_JWKS_URL / GOOGLE_CLIENT_ID are not configured (sign-in is then a 400). */
  google: GoogleVerifier | null;
  revocations: RevocationPublisher;
  jwt: { secret: string; ttlSeconds: number };
  /** Failed code attempts per client address. */
  failedAttempts: FailedAttemptLimiter;
  /** Wrong email codes per email over all its codes, so a new code does not reset the count. */
  failedPerEmail: FailedAttemptLimiter;
  /** `request-code` calls per client address and overall: each may send a mail. */
  codeRequests: { perAddress: RequestLimiter; overall: RequestLimiter };
}

const isWrongCode = (err: unknown) =>
  isDomainError(err) && (err.code === 'EMAIL_CODE_INVALID' || err.code === 'PAIRING_CODE_INVALID');

/** The auth and API-key routes, registered under `/api/v1` only when ENABLE_OPEN_API is on. */
export const openApiRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const jwtStrict = requireAuth(deps.authenticator, { mode: 'jwt-strict' });
  const multiRealm = requireAuth(deps.authenticator, { mode: 'multi+realm' });
  /** Refuses an address past its failed attempts, and counts a wrong code against it. */
  // An IPv6 client is counted by its /64 (clientKey).
  const guessGuard = async <T>(ip: string, attempt: () => Promise<T>, email?: string): Promise<T> => {
    const address = clientKey(ip);
    const wait = await deps.failedAttempts.blockedFor(address);
    if (wait > 0) {
      throw new RejectedError(
        'TOO_MANY_FAILED_ATTEMPTS',
        `Too many failed attempts from this address; try again in ${wait} s`,
      );
    }
    const emailWait = email === undefined ? 0 : await deps.failedPerEmail.blockedFor(email);
    if (emailWait > 0) {
      throw new RejectedError(
        'TOO_MANY_FAILED_ATTEMPTS',
        `Too many failed attempts for this email; try again in ${emailWait} s`,
      );
    }
    try {
      return await attempt();
    } catch (err) {
      if (isWrongCode(err)) {
        await deps.failedAttempts.recordFailure(address);
        if (email !== undefined) await deps.failedPerEmail.recordFailure(email);
      }
      throw err;
    }
  };
  const signedIn = async (user: AccountView) => ({
    user,
    token: await signOanJwt(deps.jwt.secret, { accountId: user.id, ttlSeconds: deps.jwt.ttlSeconds }),
  });

  // (1) sign in or register with a Google ID token.
  app.post(
    '/auth/oan/google',
    { schema: { body: s.googleBody, response: { 200: s.signInResponse } } },
    async (req) => {
      if (!deps.google) throw new RejectedError('GOOGLE_NOT_CONFIGURED', 'Google sign-in is not configured');
      const identity = await deps.google.verify(req.body.idToken, req.body.nonce);
      if (!identity) throw new RejectedError('GOOGLE_TOKEN_INVALID', 'Invalid Google token');
      const platform = normalizePlatform(req.body.platform);
      return signedIn(
        await signIn(ctx, { email: identity.email, googleSub: identity.sub, platform, method: 'google' }),
      );
    },
  );

  // (2) email a 6-digit code.
  app.post(
    '/auth/oan/email/request-code',
    { schema: { body: s.requestCodeBody, response: { 200: s.successResponse } } },
    async (req) => {
      const wait =
        (await deps.codeRequests.perAddress.take(clientKey(req.ip))) ||
        (await deps.codeRequests.overall.take('all'));
      if (wait > 0) {
        throw new RejectedError('TOO_MANY_FAILED_ATTEMPTS', `Too many code requests; try again in ${wait} s`);
      }
      await requestEmailCode(deps.email, req.body.email);
      return { success: true as const };
    },
  );

  // (3) sign in or register with the emailed code.
  app.post(
    '/auth/oan/email/verify',
    { schema: { body: s.verifyBody, response: { 200: s.signInResponse } } },
    async (req) => {
      const { email, code } = req.body; // normalized by the schema
      await guessGuard(req.ip, () => checkEmailCode(deps.email, email, code), email);
      const platform = normalizePlatform(req.body.platform);
      return signedIn(
        await signIn(ctx, { email: req.body.email, googleSub: null, platform, method: 'email' }),
      );
    },
  );

  // (4) sent with no body and no Content-Type, or with `{}`; either way the body is ignored.
  app.post(
    '/auth/oan/pairing-codes',
    { onRequest: jwtStrict, schema: { response: { 200: s.pairingCodeResponse } } },
    async (req) => issuePairingCode(ctx, principalOf(req).accountId),
  );

  // (5) single-use claim of a pairing code for an API key.
  app.post(
    '/auth/oan/pairing-codes/redeem',
    { schema: { body: s.redeemBody, response: { 200: s.redeemResponse } } },
    async (req) => guessGuard(req.ip, () => redeemPairingCode(ctx, req.body.code)),
  );

  // (6)
  app.get('/api-keys', { onRequest: multiRealm, schema: { response: { 200: s.apiKeyList } } }, async (req) =>
    listApiKeys(ctx, principalOf(req).accountId),
  );

  // (7) a key may revoke itself; 204 with an empty body.
  app.delete(
    '/api-keys/:apiKeyId',
    { onRequest: multiRealm, schema: { params: s.apiKeyParams, response: { 204: noContent } } },
    async (req, reply) => {
      const revokeCtx = { ...ctx, revocations: deps.revocations, log: req.log };
      await revokeApiKey(revokeCtx, principalOf(req).accountId, req.params.apiKeyId);
      return reply.status(204).send(null);
    },
  );
};

/**
 * Gateway and runtimes → auth, on the internal network only (the edge does not route `/internal`), and not
 * behind ENABLE_OPEN_API: the gateway decides whether a connector is outdated, auth records the notice once.
 * The caller proves it is a service of the fleet with the internal secret (derived from JWT_SECRET),
 * checked before the body: any other process that can reach auth's port gets a 401.
 */
export const internalRoutes: FastifyPluginAsyncZod<{ ctx: AuthContext; jwtSecret: string }> = async (
  app,
  { ctx, jwtSecret },
) => {
  app.setErrorHandler(rethrowMapped);
  app.post(
    '/internal/connector-notices',
    {
      onRequest: async (req) => {
        if (!isInternalCall(jwtSecret, req.headers[INTERNAL_CALL_HEADER])) throw unauthorized();
      },
      schema: { body: s.connectorNoticeBody, response: { 200: s.connectorNoticeResponse } },
    },
    async (req) => noticeOutdatedConnector(ctx, req.body),
  );
  // runtimes → auth: a runtime job handed to the owner (ADR 0032), told once per job.
  app.post(
    '/internal/runtime-notices',
    {
      onRequest: async (req) => {
        if (!isInternalCall(jwtSecret, req.headers[INTERNAL_CALL_HEADER])) throw unauthorized();
      },
      schema: { body: s.runtimeNoticeBody, response: { 200: s.connectorNoticeResponse } },
    },
    async (req) => noticeRuntimeJobWaiting(ctx, req.body),
  );
};
