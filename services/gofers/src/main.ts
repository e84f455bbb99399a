import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, startBackgroundReactors } from '@oan/kafka';
import { createStorage } from '@oan/storage';
import { createA2AHub } from './a2a/hub.ts';
import { A2AOwnerAnswers } from './a2a/owner.ts';
import { startA2ARecovery } from './a2a/recovery.ts';
import { buildApp, createGoferContext } from './app.ts';
import { createBrainProvider } from './brain/index.ts';
import { a2aSweepIntervalMs, loadGofersConfig } from './config.ts';
import { createGoferStore, goferMigrations } from './infra/store.ts';
import { accountBannedReactor } from './reactors/accountBanned.ts';
import { startBrain } from './reactors/brain.ts';
import { ownerAnswersReactor } from './reactors/ownerAnswers.ts';
import { RelayOwnerAnswers } from './infra/relayOwnerAnswers.ts';
import { pairingsReactor } from './reactors/pairings.ts';
import { ragReactor } from './reactors/rag.ts';
import { RelayHost } from './relay/host.ts';
import { KeySealer, relayKeySecretOf } from './relay/keys.ts';

const config = loadGofersConfig();
const logger = createLogger('gofers', config.LOG_LEVEL);
const store = createGoferStore();
// Schema `gofers` holds the event store only; the read.* tables it reads are the projector's.
const orm = await openDatabase({
  logger,
  url: config.DATABASE_URL,
  schema: 'gofers',
  migrations: goferMigrations(store),
});
const redis = new Redis(config.REDIS_URL);
const setup = await createStorage(config);
const storage = setup?.storage ?? null;
const ctx = createGoferContext({ config, orm, redis, store });
const provider = createBrainProvider(config);
// ADR 0023: published Gofers announce on the agent relay, when one is configured.
const sealer = config.GOFER_RELAY_URLS ? new KeySealer(relayKeySecretOf(config)) : null;
const relayHost =
  config.GOFER_RELAY_URLS && sealer
    ? new RelayHost({
        orm,
        redis,
        prefix: config.REDIS_PREFIX,
        ctx,
        brain: provider,
        sealer,
        logger,
        urls: config.GOFER_RELAY_URLS,
        limits: {
          callerPerMinute: config.GOFER_RELAY_INPUTS_PER_MINUTE,
          goferPerHour: config.GOFER_RELAY_TURNS_PER_HOUR,
          accountPerHour: config.GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR,
        },
      })
    : null;
const relay = relayHost && sealer ? { control: relayHost, sealer } : null;
// ADR 0035: the A2A tasks' buses and push notifications, shared by the routes and the owner's answers.
const a2a = createA2AHub({ orm, config, log: logger });
const app = await buildApp({ config, orm, redis, ctx, storage, logger, relay, callerBrain: provider, a2a });
// Serve before the reactors join their groups: after a kill -9 a join waits out the dead member's
// session, and the routes do not depend on the reactors (they open and read on their own).
await app.listen({ host: config.HOST, port: config.GOFERS_PORT });

// The reactors follow `gofers.events` (published by the outbox publisher) with their own consumer groups.
const kafka = createKafka({
  brokers: config.KAFKA_BROKERS,
  brokerRoutes: config.KAFKA_BROKER_ROUTES,
  clientId: 'oan-gofers',
  logger,
  topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
});
const registry = new SchemaRegistry(SCHEMAS_DIR);
const reactorDeps = { kafka, registry, orm, logger, topicPrefix: config.TOPIC_PREFIX };
const brain = await startBrain({ ...reactorDeps, ctx, provider });
// After a restart every published Gofer announces again (once no other process holds its lease).
await relayHost?.start();
// The other reactors share one consumer group (ADR 0049): a banned owner's Gofers leave the relay
// and A2A (`auth.events`); each pairing proposed by matching becomes a `system` row (kind 'pairing')
// in both chats (`matching.events`); the owner's answer to a caller's question goes to the caller's
// channel, once (ADR 0036); documents are parsed (`gofers.events`). The brain keeps its own group:
// a model's reply takes seconds, and a shared batch ends with its slowest member.
const reactors = await startBackgroundReactors(reactorDeps, 'gofers', [
  accountBannedReactor({ ...reactorDeps, ctx, relay: relayHost }),
  pairingsReactor({ ...reactorDeps, ctx }),
  ownerAnswersReactor({
    ...reactorDeps,
    ctx,
    channels: { relay: new RelayOwnerAnswers(orm), a2a: new A2AOwnerAnswers({ ctx, hub: a2a }) },
  }),
  ...(storage ? [ragReactor({ ...reactorDeps, store, writes: ctx.writes, storage, now: ctx.now })] : []),
]);
// Every gofers process delivers the queued A2A push notifications (a lease per row: each once).
a2a.push.delivery.start();
// A2A tasks whose turn a crash cut off end, once, by whether the turn was recorded (one process a pass).
const recovery = startA2ARecovery(
  ctx,
  a2a,
  { staleSeconds: config.GOFER_A2A_STALE_SECONDS, intervalMs: a2aSweepIntervalMs(config) },
  logger,
);

// Stop accepting requests first, then the reactors, then close what they used, in reverse order.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await recovery.stop();
  // The A2A push POSTs in flight end (each within its timeout); the rest wait in Postgres.
  await a2a.push.delivery.stop();
  // The announce sockets close, so the relay lists these Gofers again only once they re-announce.
  await relayHost?.stop();
  await brain.stop();
  await reactors.stop();
  await kafka.close();
  await setup?.listener?.close();
  await storage?.close();
  await redis.quit();
  await orm.close(true);
});
