import { randomUUID } from 'node:crypto';
import { BODY_LIMITS, trustedProxies } from '@oan/http';
import type { Redis } from 'ioredis';
import { createServiceApp } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import type { EventStore } from '@oan/eventstore';
import type { Logger } from '@oan/http';
import { WriteTracker } from '@oan/projection';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { ObjectStorage } from '@oan/storage';
import type { GoferContext } from './commands/context.ts';
import { createA2AHub, type A2AHub } from './a2a/hub.ts';
import { a2aRoutes } from './a2a/routes.ts';
import { withQaDelay } from './brain/config.ts';
import type { CallerBrain } from './brain/types.ts';
import { a2aOrigin, type GofersConfig } from './config.ts';
import { a2aOwnerRoutes } from './http/a2a.ts';
import { chatRoutes } from './http/chat.ts';
import { goferRoutes } from './http/gofers.ts';
import { pairingRoutes } from './http/pairings.ts';
import { relayRoutes } from './http/relay.ts';
import { uploadRoutes } from './http/uploads.ts';
import { createGoferStore } from './infra/store.ts';
import { RelayBudget } from './relay/budget.ts';
import type { RelayControl } from './relay/host.ts';
import type { KeySealer } from './relay/keys.ts';

export interface GoferContextDeps {
  config: Pick<GofersConfig, 'REDIS_PREFIX' | 'OAN_WEB_BASE_URL'>;
  orm: MikroORM;
  redis: Redis;
  store?: EventStore;
  now?: () => Date;
  ids?: () => string;
}

/** The commands' context, shared by the routes and the reactors of one process (main.ts). */
export function createGoferContext(deps: GoferContextDeps): GoferContext {
  return {
    orm: deps.orm,
    store: deps.store ?? createGoferStore(),
    writes: new WriteTracker(deps.redis, deps.config.REDIS_PREFIX),
    now: deps.now ?? (() => new Date()),
    ids: deps.ids ?? randomUUID,
    ...(deps.config.OAN_WEB_BASE_URL ? { webBaseUrl: deps.config.OAN_WEB_BASE_URL } : {}),
  };
}

export interface GoferAppDeps {
  config: GofersConfig;
  /** Owned by the caller (closed after the app). */
  orm: MikroORM;
  redis: Redis;
  /** The configured object-storage adapter; null or absent ⇒ no upload routes at all (404). */
  storage?: ObjectStorage | null;
  /** Built from the other deps when absent; main.ts shares one with the reactors. */
  ctx?: GoferContext;
  /** Replaces the factory's logger (tests). */
  logger?: Logger;
  /** prom-client keeps one registry per process: only one app per process may expose metrics. */
  metrics?: boolean;
  /** The ConnectOnion relay host and the key sealer (main.ts); absent ⇒ no relay routes (404). */
  relay?: { control: RelayControl; sealer: KeySealer } | null;
  /** The brain that answers callers; absent ⇒ no A2A routes (404). */
  callerBrain?: CallerBrain | null;
  /** The A2A pieces main.ts shares with the owner's answers; made here when absent (tests). */
  a2a?: A2AHub;
}

/** The composition root of the gofers service. */
export async function buildApp(deps: GoferAppDeps) {
  const { config, orm, redis } = deps;
  const storage = deps.storage ?? null;
  const { app, authenticator } = await createServiceApp({
    name: 'gofers',
    config,
    orm,
    redis,
    bodyLimit: BODY_LIMITS.gofers,
    metrics: deps.metrics,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const ctx = deps.ctx ?? createGoferContext({ config, orm, redis });

  // The gate is all or nothing: with the gate off no OAN route exists (the factory's 404 answers).
  if (config.ENABLE_OPEN_API) {
    const routeDeps = { ctx, authenticator, storage, relay: deps.relay?.control ?? null };
    await app.register(goferRoutes, { prefix: OAN_BASE_PATH, ...routeDeps });
    await app.register(chatRoutes, { prefix: OAN_BASE_PATH, ...routeDeps });
    await app.register(pairingRoutes, { prefix: OAN_BASE_PATH, ...routeDeps });
    // Without an object-storage adapter the upload routes do not exist (404).
    if (storage) await app.register(uploadRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, storage });
    // Likewise, without a relay the publish routes do not exist.
    if (deps.relay) {
      const { control, sealer } = deps.relay;
      await app.register(relayRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, relay: control, sealer });
    }
    // ADR 0035: published Gofers as A2A agents, the owner's switch and the public endpoints.
    if (deps.callerBrain) {
      const origin = a2aOrigin(config);
      await app.register(a2aOwnerRoutes, { prefix: OAN_BASE_PATH, ctx, authenticator, origin });
      await app.register(a2aRoutes, {
        ctx,
        brain: withQaDelay(deps.callerBrain, config.GOFER_A2A_QA_TURN_DELAY_MS),
        exitAfterRecord: config.GOFER_A2A_QA_FAULT === 'exit-after-record',
        logger: app.log,
        origin,
        trusted: trustedProxies(config.TRUST_PROXY),
        hub: deps.a2a ?? createA2AHub({ orm, config, log: app.log }),
        // One Gofer budget and one owner budget over relay and A2A callers (the relay's windows).
        budget: new RelayBudget(redis, config.REDIS_PREFIX, {
          callerPerMinute: config.GOFER_A2A_CALLER_PER_MINUTE,
          addressPerMinute: config.GOFER_A2A_ADDRESS_PER_MINUTE,
          goferPerHour: config.GOFER_RELAY_TURNS_PER_HOUR,
          accountPerHour: config.GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR,
        }),
      });
    }
  }
  return app;
}
