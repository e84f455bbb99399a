/**
 * A2A push notifications: the configs a caller registers on its tasks, and their durable delivery
 * through libs/webhooks (addresses checked at registration and at each send, retries, order per
 * task). `createA2aPush` gives the store and the sender the SDK's request handler takes, and the
 * delivery loop the process starts and stops.
 */
import type { OwnerResolver } from '@a2a-js/sdk/server';
import type { MikroORM } from '@oan/db';
import { pushUrlPolicy, type A2APushEnv } from './config.ts';
import { PushDelivery, type PushLog } from './delivery.ts';
import { QueuedPushSender } from './sender.ts';
import { PgPushNotificationStore } from './store.ts';

export { a2aPushEnv, pushUrlPolicy, refineA2aPushEnv, type A2APushEnv } from './config.ts';
export { authHeaders, PushDelivery, signingKey, type PushDeliveryOptions, type PushLog } from './delivery.ts';
export { a2aPushMigration } from './migration.ts';
export { QueuedPushSender, type QueuedPushSenderOptions } from './sender.ts';
export {
  callerOfUser,
  MAX_CONFIGS_PER_TASK,
  PgPushNotificationStore,
  type PushStoreOptions,
  type PushTarget,
} from './store.ts';

export interface A2APush {
  store: PgPushNotificationStore;
  sender: QueuedPushSender;
  delivery: PushDelivery;
}

/** The push pieces of one gofers process, over its database and configuration. */
export function createA2aPush(deps: {
  orm: MikroORM;
  config: A2APushEnv;
  log: PushLog;
  /** The caller of an SDK call; by default the name of its user. */
  callerOf?: OwnerResolver;
}): A2APush {
  const { orm, config, log } = deps;
  const policy = pushUrlPolicy(config);
  const store = new PgPushNotificationStore({
    orm,
    policy,
    ...(deps.callerOf ? { callerOf: deps.callerOf } : {}),
  });
  const delivery = new PushDelivery({
    orm,
    store,
    policy,
    timeoutMs: config.GOFER_A2A_PUSH_TIMEOUT_MS,
    retry: {
      baseMs: config.GOFER_A2A_PUSH_RETRY_BASE_MS,
      maxMs: config.GOFER_A2A_PUSH_RETRY_MAX_MS,
      maxAttempts: config.GOFER_A2A_PUSH_MAX_ATTEMPTS,
    },
    pollMs: config.GOFER_A2A_PUSH_POLL_MS,
    concurrency: config.GOFER_A2A_PUSH_CONCURRENCY,
    log,
  });
  const sender = new QueuedPushSender({ orm, store, onQueued: () => delivery.wake() });
  return { store, sender, delivery };
}
