import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createServiceApp } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import { BODY_LIMITS, type Logger } from '@oan/http';
import { LongPollSlots } from '@oan/projection';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { RuntimesContext } from './commands/context.ts';
import type { RuntimesConfig } from './config.ts';
import { JobWakes } from './commands/wakes.ts';
import { Endpoints, endpointSettings } from './dispatch/endpoints.ts';
import { endpointRoutes } from './http/endpointRoutes.ts';
import { jobRoutes } from './http/jobRoutes.ts';
import { runtimeRoutes } from './http/routes.ts';
import { waitingRoutes } from './http/waitingRoutes.ts';
import { replyClient } from './infra/replyClient.ts';
import { Waiters } from './infra/wake.ts';

export interface RuntimesAppDeps {
  config: RuntimesConfig;
  /** Owned by the caller (closed after the app). */
  orm: MikroORM;
  redis: Redis;
  /** Built from the other deps when absent; main.ts shares its waiters with the push tail. */
  ctx?: RuntimesContext;
  /** Built from the other deps when absent; main.ts feeds it the push tail's envelopes. */
  wakes?: JobWakes;
  /** Built from the config when absent (and closed with the app); main.ts shares it with the dispatcher. */
  endpoints?: Endpoints;
  logger?: Logger;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
}

export function createRuntimesContext(deps: {
  orm: MikroORM;
  now?: () => Date;
  waiters?: Waiters;
  /** The owning services' URLs and the secret to call them with; absent: replies are 501. */
  config?: Pick<
    RuntimesConfig,
    | 'JWT_SECRET'
    | 'GOFERS_URL'
    | 'MATCHING_URL'
    | 'CONVERSATIONS_URL'
    | 'RUNTIMES_REPLY_TIMEOUT_MS'
    | 'RUNTIMES_FAULT'
  >;
}): RuntimesContext {
  const c = deps.config;
  return {
    orm: deps.orm,
    now: deps.now ?? (() => new Date()),
    ids: randomUUID,
    waiters: deps.waiters ?? new Waiters(),
    ...(c
      ? {
          replies: replyClient({
            urls: { gofers: c.GOFERS_URL, matching: c.MATCHING_URL, conversations: c.CONVERSATIONS_URL },
            jwtSecret: c.JWT_SECRET,
            timeoutMs: c.RUNTIMES_REPLY_TIMEOUT_MS,
            exitAfterReply: c.RUNTIMES_FAULT === 'exit-after-reply',
          }),
        }
      : {}),
  };
}

/** The composition root of the runtimes service. */
export async function buildApp(deps: RuntimesAppDeps) {
  const { config, orm, redis } = deps;
  const { app, authenticator } = await createServiceApp({
    name: 'runtimes',
    config,
    orm,
    redis,
    bodyLimit: BODY_LIMITS.runtimes,
    metrics: deps.metrics,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const ctx = deps.ctx ?? createRuntimesContext({ orm, config });
  const wakes = deps.wakes ?? new JobWakes(ctx, redis, config.REDIS_PREFIX, app.log);
  ctx.givenBack = (accountId, runtimeId) => wakes.guard(wakes.onGivenBack(accountId, runtimeId));
  const sweep = setInterval(() => wakes.guard(wakes.sweep()), config.RUNTIMES_WAKE_SWEEP_MS);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
  const endpoints = deps.endpoints ?? new Endpoints(endpointSettings(config));
  if (!deps.endpoints) app.addHook('onClose', () => endpoints.close());
  // with the gate off no OAN route exists (the factory's 404 answers).
  if (config.ENABLE_OPEN_API) {
    await app.register(runtimeRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, endpoints });
    await app.register(jobRoutes, {
      prefix: OAN_BASE_PATH,
      ctx,
      authenticator,
      recheckMs: config.RUNTIMES_CLAIM_RECHECK_MS,
      heldClaimSlots: new LongPollSlots(
        redis,
        config.REDIS_PREFIX,
        'held-claims',
        config.RUNTIMES_MAX_HELD_CLAIMS,
      ),
    });
    await app.register(endpointRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, endpoints });
    await app.register(waitingRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator });
  }
  return app;
}
