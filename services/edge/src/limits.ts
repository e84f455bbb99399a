import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { requireAuth, type Authenticator } from '@oan/auth';
import { rateLimited, type ZodTypeProvider } from '@oan/http';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_RETENTION_SECONDS,
  OAN_BASE_PATH,
  OAN_EVENTS_MAX_WAIT_SECONDS,
  limitsResponse,
  type LimitsResponse,
} from '@oan/protocol';
import type { AccountResolver } from './accounts.ts';

const WINDOW_MS = 60_000;

export interface LimitsDeps {
  accounts: AccountResolver;
  authenticator: Authenticator;
  redis: Redis;
  redisPrefix: string;
  /** RATE_LIMIT_PER_MINUTE; undefined: no limits (v1), and no RateLimit headers. */
  perMinute: number | undefined;
}

const isApi = (req: FastifyRequest) => req.url.startsWith(`${OAN_BASE_PATH}/`);

/**
 * Visible limits, a connector extension: the opt-in rate limit of every REST request under /api/v1, counted per account in
 * Redis so every edge replica shares the count (@fastify/rate-limit with its Redis store, a fixed
 * window). A request that names no account — no credential, or one the services will refuse — is not
 * counted and carries no RateLimit headers; the owner answers it as in v1. Registered before the
 * routes (the plugin hooks the routes registered after it).
 */
export async function registerLimits(app: FastifyInstance, deps: LimitsDeps): Promise<void> {
  const { perMinute } = deps;
  let usage: ((req: FastifyRequest) => Promise<LimitsResponse['rateLimit']>) | undefined;
  if (perMinute !== undefined) {
    await app.register(rateLimit, {
      global: true,
      max: perMinute,
      timeWindow: WINDOW_MS,
      redis: deps.redis,
      nameSpace: `${deps.redisPrefix}rate:`,
      // RateLimit-Limit, -Remaining, -Reset (IETF httpapi ratelimit-headers draft), Retry-After on 429.
      enableDraftSpec: true,
      keyGenerator: async (req) => (isApi(req) ? ((await deps.accounts.accountOf(req)) ?? '') : ''),
      allowList: (_req, key) => key === '',
      // The limit protects the owners; Redis being down is no reason to refuse every request.
      skipOnError: true,
      errorResponseBuilder: (_req, ctx) => rateLimited(`Too many requests: retry in ${ctx.after}`),
    });
    const peek = app.createRateLimit();
    usage = async (req) => {
      const state = await peek(req, { increment: false });
      if (state.isAllowed) return null;
      return {
        limit: state.max,
        remaining: state.remaining,
        used: state.max - state.remaining,
        windowSeconds: WINDOW_MS / 1000,
        resetSeconds: state.ttlInSeconds,
      };
    };
  }

  // The account's own view; authenticated as the event routes are (an API key or an OAN JWT).
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', allowBanned: true });
  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      `${OAN_BASE_PATH}/limits`,
      { onRequest: auth, schema: { response: { 200: limitsResponse } } },
      async (req) => ({
        rateLimit: usage ? await usage(req) : null,
        longPoll: { maxWaitSeconds: OAN_EVENTS_MAX_WAIT_SECONDS },
        idempotency: {
          retentionSeconds: IDEMPOTENCY_RETENTION_SECONDS,
          maxKeyLength: IDEMPOTENCY_KEY_MAX_LENGTH,
        },
      }),
    );
}
