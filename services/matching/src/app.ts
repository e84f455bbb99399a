import { randomUUID } from 'node:crypto';
import { BODY_LIMITS } from '@oan/http';
import type { Redis } from 'ioredis';
import { createServiceApp } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import type { EventStore } from '@oan/eventstore';
import type { Logger } from '@oan/http';
import { WriteTracker } from '@oan/projection';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { ObjectStorage } from '@oan/storage';
import type { MatchingContext } from './commands/context.ts';
import { ThreadWrites } from './commands/writes.ts';
import type { MatchingConfig } from './config.ts';
import { counterpartAttachmentRoutes } from './http/counterpartAttachments.ts';
import { matchRequestRoutes } from './http/matchRequests.ts';
import { threadRoutes } from './http/threads.ts';
import { createMatchingStore } from './infra/store.ts';

export interface MatchingContextDeps {
  config: Pick<MatchingConfig, 'REDIS_PREFIX' | 'ID_SECRET'>;
  orm: MikroORM;
  redis: Redis;
  store?: EventStore;
  now?: () => Date;
  ids?: () => string;
}

/** The commands' context, shared by the routes and (later) the reactors of one process (main.ts). */
export function createMatchingContext(deps: MatchingContextDeps): MatchingContext {
  const tracker = new WriteTracker(deps.redis, deps.config.REDIS_PREFIX);
  return {
    orm: deps.orm,
    store: deps.store ?? createMatchingStore(),
    writes: new ThreadWrites(tracker),
    now: deps.now ?? (() => new Date()),
    ids: deps.ids ?? randomUUID,
    idSecret: deps.config.ID_SECRET,
  };
}

export interface MatchingAppDeps {
  config: MatchingConfig;
  /** Owned by the caller (closed after the app). */
  orm: MikroORM;
  redis: Redis;
  /**
   * The gofers service's object storage, used only to sign counterpart-attachment URLs;
   * null or absent ⇒ that route answers 404 for every attachment.
   */
  storage?: ObjectStorage | null;
  /** Built from the other deps when absent; main.ts shares one with the reactors. */
  ctx?: MatchingContext;
  /** Replaces the factory's logger (tests). */
  logger?: Logger;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
}

/** The composition root of the matching service. */
export async function buildApp(deps: MatchingAppDeps) {
  const { config, orm, redis } = deps;
  const { app, authenticator } = await createServiceApp({
    name: 'matching',
    config,
    orm,
    redis,
    bodyLimit: BODY_LIMITS.matching,
    metrics: deps.metrics,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const ctx = deps.ctx ?? createMatchingContext({ config, orm, redis });

  // ENABLE_OPEN_API is all-or-nothing: with the gate off no OAN route exists (the
  // factory's 404 answers).
  if (config.ENABLE_OPEN_API) {
    await app.register(threadRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator });
    await app.register(matchRequestRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator });
    await app.register(counterpartAttachmentRoutes, {
      prefix: OAN_BASE_PATH,
      ctx,
      authenticator,
      storage: deps.storage ?? null,
    });
  }
  return app;
}
