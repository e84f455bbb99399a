import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase, sql } from '@oan/db';
import { createHttpApp, createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { loadProjectorConfig, topicNames } from './config.ts';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { startPipeline } from './pipeline.ts';

const cfg = loadProjectorConfig();
const logger = createLogger('projector', cfg.LOG_LEVEL);
// Every projector write can be made again from the log: its commits need not wait for the WAL flush
// (ADR 0015).
const orm = await openDatabase({
  logger,
  url: cfg.DATABASE_URL,
  schema: 'projector',
  migrations,
  synchronousCommit: false,
});
const redis = new Redis(cfg.REDIS_URL, { maxRetriesPerRequest: 2 });
const kafka = createKafka({
  brokers: cfg.KAFKA_BROKERS,
  brokerRoutes: cfg.KAFKA_BROKER_ROUTES,
  clientId: 'oan-projector',
  logger,
  topicPartitions: cfg.KAFKA_TOPIC_PARTITIONS,
});
const t = topicNames(cfg);
await kafka.ensureTopics([...t.domain, t.oan].map((topic) => ({ topic })));
const registry = new SchemaRegistry(SCHEMAS_DIR);
const pipeline = await startPipeline({ cfg, orm, kafka, registry, redis, logger, mode: 'live' });

const app = await createHttpApp({
  name: 'projector',
  logLevel: cfg.LOG_LEVEL,
  readiness: {
    postgres: () => sql(orm.em.fork(), 'select 1'),
    redis: () => redis.ping(),
    kafka: () => Promise.all(pipeline.consumers.map((c) => c.waitForAssignment(2000))),
  },
});
await app.listen({ host: cfg.HOST, port: cfg.PROJECTOR_PORT });

closeWithGrace({ delay: 10_000 }, async ({ err }) => {
  if (err) logger.error({ err }, 'projector shutting down after an error');
  await app.close();
  await pipeline.stop();
  await kafka.close();
  redis.disconnect();
  await orm.close();
});
