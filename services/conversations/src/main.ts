import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, startBackgroundReactors } from '@oan/kafka';
import { createStorage } from '@oan/storage';
import { buildApp, createConversationContext } from './app.ts';
import { loadConversationsConfig } from './config.ts';
import { conversationMigrations, createConversationStore } from './infra/store.ts';
import { keyNoticesReactor } from './reactors/keyNotices.ts';
import { goferDeletedReactor, openerReactor } from './reactors/lifecycle.ts';

const config = loadConversationsConfig();
const logger = createLogger('conversations', config.LOG_LEVEL);
const store = createConversationStore();
// Schema `conversations`: the event store and its write state; the read.* tables are the projector's.
const orm = await openDatabase({
  logger,
  url: config.DATABASE_URL,
  schema: 'conversations',
  migrations: conversationMigrations(store),
});
const redis = new Redis(config.REDIS_URL);
// fs: files go to STORAGE_DIR and are served by the gofers process's listener (same directory and key).
const storage = (await createStorage(config, { listen: false }))?.storage ?? null;
const ctx = createConversationContext({ config, orm, redis, store });
const app = await buildApp({ config, orm, redis, ctx, storage, logger });
// Serve before the reactors join their groups: after a kill -9 a join waits out the dead member's
// session, and the routes do not depend on the reactors (they open and read on their own).
await app.listen({ host: config.HOST, port: config.CONVERSATIONS_PORT });

const kafka = createKafka({
  brokers: config.KAFKA_BROKERS,
  brokerRoutes: config.KAFKA_BROKER_ROUTES,
  clientId: 'oan-conversations',
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
// The opener (`matching.events`), deleted Gofers (`gofers.events`) and key notices
// (`conversations.events`) share one consumer group that gathers its fetches (ADR 0049). Nobody waits
// on them: a connector's first route call opens a conversation the opener has not opened yet, and a
// key changed before the opener ran is told when it opens (ADR 0050).
const reactors = await startBackgroundReactors(reactorDeps, 'conversations', [
  openerReactor(reactorDeps),
  goferDeletedReactor({ ...reactorDeps, storage }),
  keyNoticesReactor(reactorDeps),
]);

// Stop accepting requests first, then the reactors, then close what they used, in reverse order.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await reactors.stop();
  await kafka.close();
  await storage?.close();
  await redis.quit();
  await orm.close(true);
});
