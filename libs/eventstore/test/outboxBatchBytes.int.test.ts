import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, type MikroORM } from '@oan/db';
import { createKafka, runConsumer, silentLogger, type KafkaHandle } from '@oan/kafka';
import { ensureInfra, waitFor } from '@oan/testing';
import { domainHeaders, EventStore, startOutboxPublisher } from '../src/index.ts';

/**
 * The broker takes a record batch of at most `message.max.bytes` (about 1 MiB by default), and a
 * producer puts every record of one partition in a send into one batch: two large records in one
 * publish were refused together, again on every retry, and nothing behind them moved.
 */
const id = randomBytes(4).toString('hex');
const url = `postgres://postgres@127.0.0.1:5432/oan_t_${id}`;
const topic = `t_${id}.big.events`;
const store = new EventStore('big_test');
let orm: MikroORM;
let kafka: KafkaHandle;
const errors: string[] = [];
const log = {
  info: () => undefined,
  warn: () => undefined,
  error: (o: object) => void errors.push(JSON.stringify(o)),
};

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url, schema: 'big_test', migrations: [store.migration()] });
  kafka = createKafka({
    brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    clientId: 'outbox-bytes-test',
    logger: silentLogger,
  });
  await kafka.ensureTopics([{ topic, numPartitions: 1 }]);
});
afterAll(async () => {
  await kafka.deleteTopics([topic]);
  await kafka.close();
  await orm.close(true);
  await dropDatabase(url);
});

describe('when two records of about 600 KiB wait in the outbox together', () => {
  it('publishes both (each batch stays under the broker’s limit) and the one behind them', async () => {
    const big = (n: number) => ({ n, blob: randomBytes(300 * 1024).toString('hex') }); // ~600 KiB of JSON
    const small = { n: 3, blob: 'small' };
    await orm.em.fork().transactional((em) =>
      store.append(em, [
        {
          streamId: 's-big',
          expectedVersion: 'no_stream',
          events: [big(1), big(2), small].map((data) => ({
            type: 'T',
            data,
            partitionKey: 'k',
            occurredAt: new Date().toISOString(),
          })),
        },
      ]),
    );
    const producer = await kafka.producer({ idempotent: true });
    const outbox = await startOutboxPublisher({
      databaseUrl: url,
      schema: 'big_test',
      logger: log,
      idleMs: 100,
      encode: (e) => ({
        key: e.partitionKey,
        value: Buffer.from(JSON.stringify(e.data)),
        headers: domainHeaders(e),
      }),
      publish: async (messages) => {
        await producer.send({ topic, acks: -1, messages });
      },
    });
    const seen: number[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId: `g_${id}`,
      topics: [topic],
      fromBeginning: true,
      eachBatch: async (b) => {
        for (const m of b.messages) seen.push((JSON.parse(m.value!.toString()) as { n: number }).n);
        if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
      },
    });
    try {
      await waitFor(() => seen.length >= 3, { timeoutMs: 30_000, what: 'the three records published' });
      expect(seen).toEqual([1, 2, 3]);
      await waitFor(async () => (await outbox.backlog()) === 0, { what: 'an empty outbox' });
      expect(errors).toEqual([]);
    } finally {
      await consumer.stop();
      await outbox.stop();
    }
  }, 60_000);
});
