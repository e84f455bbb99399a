import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { createKafka, runConsumer, silentLogger, type KafkaHandle } from '@oan/kafka';
import { ensureInfra, waitFor } from '@oan/testing';
import { domainHeaders, EventStore, startOutboxPublisher } from '../src/index.ts';

const id = randomBytes(4).toString('hex');
const url = `postgres://postgres@127.0.0.1:5432/oan_t_${id}`;
const topic = `t_${id}.outbox.events`;
const store = new EventStore('outbox_test');
let orm: MikroORM;
let kafka: KafkaHandle;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  ensureInfra();
  orm = await openDatabase({ url, schema: 'outbox_test', migrations: [store.migration()] });
  kafka = createKafka({
    brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    clientId: 'outbox-test',
    logger: silentLogger,
  });
  await kafka.ensureTopics([{ topic, numPartitions: 3 }]);
});
afterAll(async () => {
  await kafka.deleteTopics([topic]);
  await kafka.close();
  await orm.close(true);
  await dropDatabase(url);
});

describe('the outbox publisher', () => {
  it('publishes every event once per stream in stream order, keyed by account, and empties the outbox', async () => {
    const producer = await kafka.producer({ idempotent: true });
    const publisher = await startOutboxPublisher({
      databaseUrl: url,
      schema: 'outbox_test',
      logger: log,
      batchSize: 50,
      encode: (e) => ({
        key: e.partitionKey,
        value: Buffer.from(JSON.stringify(e.data)),
        headers: domainHeaders(e),
      }),
      publish: async (messages) => {
        await producer.send({ topic, acks: -1, messages });
      },
    });
    const accounts = ['a', 'b', 'c', 'd'];
    // Concurrent writers on four streams while the publisher runs.
    await Promise.all(
      accounts.map(async (acc) => {
        for (let i = 1; i <= 60; i++) {
          await orm.em.fork().transactional((em) =>
            store.append(em, [
              {
                streamId: `s-${acc}`,
                expectedVersion: i - 1 || 'no_stream',
                events: [{ type: 'T', data: { i }, partitionKey: acc, occurredAt: new Date().toISOString() }],
              },
            ]),
          );
        }
      }),
    );
    const seen = new Map<string, number[]>();
    const consumer = await runConsumer({
      kafka,
      groupId: `g_${id}`,
      topics: [topic],
      fromBeginning: true,
      eachBatch: async (b) => {
        for (const m of b.messages) {
          const list = seen.get(m.key!) ?? [];
          list.push(Number(m.headers['oan-stream-version']));
          seen.set(m.key!, list);
        }
        if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
      },
    });
    await waitFor(() => accounts.every((a) => (seen.get(a)?.length ?? 0) >= 60), {
      timeoutMs: 30_000,
      what: 'all events consumed',
    });
    for (const a of accounts) expect(seen.get(a)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    await waitFor(async () => (await publisher.backlog()) === 0, { what: 'empty outbox' });
    const [row] = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from outbox_test.outbox',
    );
    expect(row!.n).toBe('0');
    await consumer.stop();
    await publisher.stop();
  });

  it('deletes what it published with its next read, within 50 ms when none comes, and on stop', async () => {
    const outboxRows = async () =>
      Number(
        (await sql<{ n: string }>(orm.em.fork(), 'select count(*)::text as n from outbox_test.outbox'))[0]!.n,
      );
    const appendOne = (streamId: string) =>
      orm.em.fork().transactional((em) =>
        store.append(em, [
          {
            streamId,
            expectedVersion: 'no_stream',
            events: [{ type: 'T', data: {}, partitionKey: 'x', occurredAt: new Date().toISOString() }],
          },
        ]),
      );
    let acked = 0;
    const start = () =>
      startOutboxPublisher({
        databaseUrl: url,
        schema: 'outbox_test',
        logger: log,
        // No idle poll in this test: only a wake-up, the short wait after a publish or stop() deletes.
        idleMs: 60_000,
        encode: (e) => ({ key: e.partitionKey, value: Buffer.from('{}'), headers: domainHeaders(e) }),
        publish: async () => {
          acked += 1;
        },
      });
    const publisher = await start();
    await waitFor(() => publisher.isLeader(), { what: 'leader' });
    // Idle after its publish: the row goes within the short wait, not the 60 s poll.
    await appendOne(`del-${id}-1`);
    store.committed(orm);
    await waitFor(() => acked === 1, { what: 'published' });
    await waitFor(async () => (await outboxRows()) === 0, {
      timeoutMs: 2_000,
      what: 'deleted without a wake-up',
    });
    // Stopped right after a publish: nothing is left for a restart to publish again.
    await appendOne(`del-${id}-2`);
    store.committed(orm);
    await waitFor(() => acked === 2, { intervalMs: 1, what: 'published' });
    await publisher.stop();
    expect(await outboxRows()).toBe(0);
    const again = await start();
    await new Promise((r) => setTimeout(r, 300));
    expect(acked).toBe(2);
    await again.stop();
  });

  it('lets only one publisher lead a schema', async () => {
    const mk = () =>
      startOutboxPublisher({
        databaseUrl: url,
        schema: 'outbox_test',
        logger: log,
        idleMs: 50,
        encode: () => ({ key: '', value: Buffer.alloc(0), headers: {} }),
        publish: async () => undefined,
      });
    const [r1, r2] = await Promise.all([mk(), mk()]);
    await waitFor(() => r1.isLeader() || r2.isLeader(), { what: 'a leader' });
    await new Promise((r) => setTimeout(r, 300));
    expect([r1.isLeader(), r2.isLeader()].filter(Boolean)).toHaveLength(1);
    await Promise.all([r1.stop(), r2.stop()]);
  });

  it('waits while a process of the old name "relay" holds the schema, then leads', async () => {
    // During a rolling deploy the old process runs beside the new one: both must take the same lock.
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    await old.query('select pg_advisory_lock(hashtext($1))', ['relay:outbox_test']);
    const publisher = await startOutboxPublisher({
      databaseUrl: url,
      schema: 'outbox_test',
      logger: log,
      idleMs: 50,
      encode: () => ({ key: '', value: Buffer.alloc(0), headers: {} }),
      publish: async () => undefined,
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(publisher.isLeader()).toBe(false);
      await old.end();
      await waitFor(() => publisher.isLeader(), { what: 'the publisher to lead once the old one left' });
    } finally {
      await old.end().catch(() => undefined);
      await publisher.stop();
    }
  });
});
