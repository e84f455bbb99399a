import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { createStorage } from '@oan/storage';
import { buildApp, createMatchingContext } from './app.ts';
import { loadMatchingConfig } from './config.ts';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, startBackgroundReactors } from '@oan/kafka';
import { discoveryIndexMigrations } from './infra/discoveryIndex.ts';
import { createMatchingStore, matchingMigrations } from './infra/store.ts';
import { accountBannedReactor } from './reactors/accountBanned.ts';
import { discoveryReactor } from './reactors/discovery.ts';
import { startDiscoverySweep } from './reactors/discoverySweep.ts';
import { goferDeletedReactor } from './reactors/goferDeleted.ts';
import { startSession } from './reactors/session.ts';
import { createSessionProvider } from './sessionProviders/config.ts';

const config = loadMatchingConfig();
const logger = createLogger('matching', config.LOG_LEVEL);
const store = createMatchingStore();
// Schema `matching`: the event store and the inline lookups; the read.* tables are the projector's.
const orm = await openDatabase({
  logger,
  url: config.DATABASE_URL,
  schema: 'matching',
  migrations: [...matchingMigrations(store), ...discoveryIndexMigrations],
});
const redis = new Redis(config.REDIS_URL);
const ctx = createMatchingContext({ config, orm, redis, store });
// Signing counterpart-attachment URLs only: the gofers process stores the files and serves them (fs
// listener).
const storage = (await createStorage(config, { listen: false }))?.storage ?? null;
const app = await buildApp({ config, orm, redis, ctx, storage, logger });
// Serve before the reactors join their groups: after a kill -9 a join waits out the dead member's
// session, and the routes do not depend on the reactors (they open and read on their own).
await app.listen({ host: config.HOST, port: config.MATCHING_PORT });

// Reactors: discovery on gofers.events, sessions on matching.events, closing the threads of deleted
// Gofers (gofers.events) and of banned accounts (auth.events). All but the sessions share one
// consumer group (ADR 0049); a session waits on its negotiation model and keeps a group of its own.
const kafka = createKafka({
  brokers: config.KAFKA_BROKERS,
  brokerRoutes: config.KAFKA_BROKER_ROUTES,
  clientId: 'oan-matching',
  logger,
  topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
});
const reactorDeps = {
  kafka,
  registry: new SchemaRegistry(SCHEMAS_DIR),
  ctx,
  logger,
  topicPrefix: config.TOPIC_PREFIX,
};
const caps = { maxOpenPairings: config.PAIRING_MAX_OPEN, maxProposalsPerDay: config.PAIRING_MAX_PER_DAY };
const reactors = [
  await startBackgroundReactors(reactorDeps, 'matching', [
    discoveryReactor({ ...reactorDeps, mode: config.PAIRING_MODE, caps }),
    goferDeletedReactor(reactorDeps),
    accountBannedReactor(reactorDeps),
  ]),
  await startSession({ ...reactorDeps, provider: createSessionProvider(config) }),
];
// Discovery also sweeps every ready Gofer periodically, one matching process at a time.
const sweep = startDiscoverySweep(
  { ctx, logger, mode: config.PAIRING_MODE, caps },
  config.DISCOVERY_SWEEP_MS,
);

// Stop accepting requests first, then close what they used, in reverse order.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await sweep.stop();
  await Promise.all(reactors.map((r) => r.stop()));
  await kafka.close();
  await storage?.close();
  await redis.quit();
  await orm.close(true);
});
