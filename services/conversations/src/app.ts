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
import type { ConversationContext } from './commands/context.ts';
import type { ConversationsConfig } from './config.ts';
import { attachmentRoutes } from './http/attachments.ts';
import { keyRoutes } from './http/keys.ts';
import { messageRoutes } from './http/messages.ts';
import { revisionRoutes } from './http/revisions.ts';
import { noClockOffset, redisClockOffset } from './infra/qaClock.ts';
import { createConversationStore } from './infra/store.ts';

export interface ConversationContextDeps {
  config: Pick<ConversationsConfig, 'REDIS_PREFIX' | 'CONVERSATIONS_QA_CLOCK'>;
  orm: MikroORM;
  redis: Redis;
  store?: EventStore;
  now?: () => Date;
  ids?: () => string;
}

/** The commands' context, shared by the routes and the reactors of one process (main.ts). */
export function createConversationContext(deps: ConversationContextDeps): ConversationContext {
  return {
    orm: deps.orm,
    store: deps.store ?? createConversationStore(),
    writes: new WriteTracker(deps.redis, deps.config.REDIS_PREFIX),
    now: deps.now ?? (() => new Date()),
    clockOffsetMs:
      deps.config.CONVERSATIONS_QA_CLOCK === 'redis'
        ? redisClockOffset(deps.redis, deps.config.REDIS_PREFIX)
        : noClockOffset,
    ids: deps.ids ?? randomUUID,
  };
}

export interface ConversationAppDeps {
  config: ConversationsConfig;
  /** Owned by the caller (closed after the app). */
  orm: MikroORM;
  redis: Redis;
  /** The configured object-storage adapter; null or absent ⇒ no attachments. */
  storage?: ObjectStorage | null;
  /** Built from the other deps when absent; main.ts shares one with the reactors. */
  ctx?: ConversationContext;
  /** Replaces the factory's logger (tests). */
  logger?: Logger;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
}

/** The composition root of the conversations service. */
export async function buildApp(deps: ConversationAppDeps) {
  const { config, orm, redis } = deps;
  const storage = deps.storage ?? null;
  const { app, authenticator } = await createServiceApp({
    name: 'conversations',
    config,
    orm,
    redis,
    bodyLimit: BODY_LIMITS.conversations,
    metrics: deps.metrics,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const ctx = deps.ctx ?? createConversationContext({ config, orm, redis });

  // with the gate off no OAN route exists (the factory's 404 answers).
  if (config.ENABLE_OPEN_API) {
    await app.register(messageRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, storage });
    await app.register(revisionRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, storage });
    await app.register(keyRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator });
    if (storage) await app.register(attachmentRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, storage });
  }
  return app;
}
