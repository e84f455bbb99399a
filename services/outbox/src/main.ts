import closeWithGrace from 'close-with-grace';
import { domainHeaders, startOutboxPublisher, type OutboxPublisher } from '@oan/eventstore';
import { createHttpApp, createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { Counter, Gauge } from 'prom-client';
import { loadOutboxConfig } from './config.ts';

const cfg = loadOutboxConfig();
const logger = createLogger('outbox', cfg.LOG_LEVEL);
const registry = new SchemaRegistry(SCHEMAS_DIR);
const kafka = createKafka({
  brokers: cfg.KAFKA_BROKERS,
  brokerRoutes: cfg.KAFKA_BROKER_ROUTES,
  clientId: 'oan-outbox',
  logger,
  topicPartitions: cfg.KAFKA_TOPIC_PARTITIONS,
});
const topicOf = (schema: string) => `${cfg.TOPIC_PREFIX}${schema}.events`;
await kafka.ensureTopics(cfg.OUTBOX_SCHEMAS.map((s) => ({ topic: topicOf(s) })));
// Renews its producer id after a broker lost its sequence state (the failed batch is published again).
const producer = await kafka.sender();

const published = new Counter({
  name: 'oan_outbox_published_total',
  help: 'Events published',
  labelNames: ['schema'],
});
const publishers = new Map<string, OutboxPublisher>();
for (const schema of cfg.OUTBOX_SCHEMAS) {
  const topic = topicOf(schema);
  publishers.set(
    schema,
    await startOutboxPublisher({
      databaseUrl: cfg.DATABASE_URL,
      schema,
      logger,
      encode: (e) => {
        const { value, headers } = registry.encode(e.type, e.data, e.version);
        return { key: e.partitionKey, value, headers: { ...domainHeaders(e), ...headers } };
      },
      // acks=-1 on an idempotent producer with one request in flight: order per partition holds.
      publish: async (messages) => {
        await producer.send({ topic, acks: -1, messages });
      },
      onPublished: (n) => published.inc({ schema }, n),
    }),
  );
}
new Gauge({
  name: 'oan_outbox_backlog',
  help: 'Events appended but not yet acknowledged by the broker',
  labelNames: ['schema'],
  async collect() {
    for (const [schema, publisher] of publishers) this.set({ schema }, await publisher.backlog());
  },
});

const app = await createHttpApp({
  name: 'outbox',
  logLevel: cfg.LOG_LEVEL,
  readiness: { kafka: () => kafka.admin().then((a) => a.listTopics()) },
});
await app.listen({ host: cfg.HOST, port: cfg.OUTBOX_PORT });

closeWithGrace({ delay: 10_000 }, async ({ err }) => {
  if (err) logger.error({ err }, 'outbox shutting down after an error');
  await app.close();
  await Promise.all([...publishers.values()].map((r) => r.stop()));
  await kafka.close();
});
