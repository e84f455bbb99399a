import type { Redis } from 'ioredis';
import { createAuthenticator } from '@oan/auth';
import { sql, type MikroORM } from '@oan/db';
import { BODY_LIMITS, createHttpApp, trustedProxies, type Logger } from '@oan/http';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { SignInContext } from './commands/signIn.ts';
import type { AuthConfig } from './config.ts';
import { EmailCodeStore } from './infra/emailCodes.ts';
import { FailedAttemptLimiter } from './infra/failedAttempts.ts';
import { RequestLimiter } from './infra/requestLimiter.ts';
import { createGoogleVerifier, type GoogleVerifier } from './infra/google.ts';
import type { Mailer } from './infra/mailer.ts';
import { createRedisRevocationPublisher } from './infra/push.ts';
import { createAuthStore } from './infra/store.ts';
import { internalRoutes, openApiRoutes } from './http/routes.ts';
import { webhookRoutes } from './http/webhooks.ts';
import { urlPolicy } from './webhooks/index.ts';

export interface AuthAppDeps {
  config: AuthConfig;
  orm: MikroORM;
  redis: Redis;
  mailer: Mailer;
  /** The clock of every command (tests move it to expire pairing codes). */
  now?: () => Date;
  /** Replaces the factory's logger (tests capture lines to prove secrets never reach them). */
  logger?: Logger;
  /** Overrides the verifier built from GOOGLE_* (default: built when both are configured). */
  google?: GoogleVerifier | null;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
}

/** The composition root of the auth service. The caller owns (and closes) orm, redis and mailer. */
export async function buildApp(deps: AuthAppDeps) {
  const { config, orm, redis } = deps;
  const app = await createHttpApp({
    name: 'auth',
    logLevel: config.LOG_LEVEL,
    openapi: { title: 'OAN auth' },
    bodyLimit: BODY_LIMITS.auth,
    metrics: deps.metrics,
    readiness: {
      postgres: () => sql(orm.em.fork(), 'select 1'),
      redis: () => redis.ping(),
    },
    fastify: {
      trustProxy: trustedProxies(config.TRUST_PROXY),
      ...(deps.logger ? { loggerInstance: deps.logger } : {}),
    },
  });

  const ctx: SignInContext = {
    orm,
    store: createAuthStore(),
    now: deps.now ?? (() => new Date()),
    idSecret: config.ID_SECRET,
  };
  const authenticator = createAuthenticator({
    orm,
    jwtSecret: config.JWT_SECRET,
    onBackgroundError: (err) => app.log.warn({ err }, 'could not record API key last use'),
  });
  app.addHook('onClose', () => authenticator.drain());

  if (config.ENABLE_OPEN_API) {
    await app.register(openApiRoutes, {
      prefix: OAN_BASE_PATH,
      ctx,
      authenticator,
      email: {
        codes: new EmailCodeStore(redis, config.REDIS_PREFIX),
        mailer: deps.mailer,
        testCodes: config.OAN_TEST_LOGIN_CODES ?? new Map(),
        log: app.log,
      },
      google: deps.google !== undefined ? deps.google : googleFromConfig(config),
      revocations: createRedisRevocationPublisher(redis, config.REDIS_PREFIX),
      jwt: { secret: config.JWT_SECRET, ttlSeconds: config.JWT_TTL_SECONDS },
      failedAttempts: new FailedAttemptLimiter(
        redis,
        config.REDIS_PREFIX,
        config.AUTH_MAX_FAILED_ATTEMPTS,
        config.AUTH_FAILED_ATTEMPTS_WINDOW_SECONDS,
      ),
      codeRequests: {
        perAddress: new RequestLimiter(
          redis,
          `${config.REDIS_PREFIX}code-requests`,
          config.AUTH_MAX_CODE_REQUESTS_PER_ADDRESS,
          config.AUTH_CODE_REQUESTS_WINDOW_SECONDS,
        ),
        overall: new RequestLimiter(
          redis,
          `${config.REDIS_PREFIX}code-requests-all`,
          config.AUTH_MAX_CODE_REQUESTS,
          config.AUTH_CODE_REQUESTS_WINDOW_SECONDS,
        ),
      },
      failedPerEmail: new FailedAttemptLimiter(
        redis,
        `${config.REDIS_PREFIX}email-`,
        config.AUTH_MAX_FAILED_PER_EMAIL,
        config.AUTH_EMAIL_FAILED_WINDOW_SECONDS,
      ),
    });
    await app.register(webhookRoutes, {
      prefix: OAN_BASE_PATH,
      orm,
      authenticator,
      policy: urlPolicy(config),
      now: ctx.now,
    });
  }
  await app.register(internalRoutes, { ctx, jwtSecret: config.JWT_SECRET });
  return app;
}

function googleFromConfig(config: AuthConfig): GoogleVerifier | null {
  if (!config.GOOGLE_JWKS_URL || !config.GOOGLE_CLIENT_ID) return null;
  return createGoogleVerifier({
    jwksUrl: config.GOOGLE_JWKS_URL,
    clientId: config.GOOGLE_CLIENT_ID,
    issuer: config.GOOGLE_ISSUER,
  });
}
