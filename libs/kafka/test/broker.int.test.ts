// Proves kafkajs 2.2.4 against the broker started by infra/kafka/start.sh (see
// docs/adr/0002-kafka-broker-version.md). Uses kafkajs directly on purpose: this is the
// compatibility check underneath libs/kafka, not a test of the wrapper.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import type { Admin, Consumer, Producer } from 'kafkajs';
import { brokersFromEnv, ensureBroker, uniqueSuffix as suffix, waitUntil } from './helpers.ts';

const kafka = new Kafka({
  clientId: 'broker-int-test',
  brokers: brokersFromEnv(),
  // kafkajs logs retried attempts at ERROR (e.g. CONCURRENT_TRANSACTIONS right after a commit);
  // failures that matter surface as rejected promises.
  logLevel: logLevel.NOTHING,
  retry: { retries: 5 },
});
const topics: string[] = [];
const clients: Array<Producer | Consumer> = [];
let admin: Admin;

async function newTopic(numPartitions = 1): Promise<string> {
  const topic = `it-broker-${suffix()}`;
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  expect(created).toBe(true);
  topics.push(topic);
  return topic;
}
function track<T extends Producer | Consumer>(client: T): T {
  clients.push(client);
  return client;
}

beforeAll(async () => {
  ensureBroker();
  admin = kafka.admin();
  await admin.connect();
}, 600_000);

afterAll(async () => {
  for (const c of clients) await c.disconnect().catch(() => undefined);
  if (admin) {
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
    await admin.disconnect();
  }
}, 60_000);

describe('kafkajs against the broker', () => {
  it('creates a topic via admin and lists it', async () => {
    const topic = await newTopic(3);
    expect(await admin.listTopics()).toContain(topic);
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(meta.topics[0]?.partitions).toHaveLength(3);
  }, 60_000);

  it('produces with an idempotent producer (acks -1)', async () => {
    const topic = await newTopic();
    const producer = track(kafka.producer({ idempotent: true, maxInFlightRequests: 1 }));
    await producer.connect();
    const res = await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: 5 }, (_, i) => ({ key: 'k', value: `v${i}` })),
    });
    expect(res[0]?.errorCode).toBe(0);
    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets[0]?.high).toBe('5');
  }, 60_000);

  it('consumer group commits offsets and a restarted consumer resumes from them', async () => {
    const topic = await newTopic();
    const groupId = `it-broker-group-${suffix()}`;
    const producer = track(kafka.producer({ idempotent: true }));
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })),
    });

    const first = track(kafka.consumer({ groupId, maxWaitTimeInMs: 500 }));
    await first.connect();
    await first.subscribe({ topic, fromBeginning: true });
    const seenFirst: number[] = [];
    await first.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const offset = Number(message.offset);
        seenFirst.push(offset);
        if (offset < 5) {
          await first.commitOffsets([{ topic, partition, offset: String(offset + 1) }]);
        }
      },
    });
    await waitUntil(() => seenFirst.includes(4), 30_000);
    await first.disconnect();
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(committed[0]?.partitions[0]?.offset).toBe('5');

    const second = track(kafka.consumer({ groupId, maxWaitTimeInMs: 500 }));
    await second.connect();
    await second.subscribe({ topic, fromBeginning: true });
    const seenSecond: string[] = [];
    await second.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        seenSecond.push(message.value?.toString() ?? '');
      },
    });
    await waitUntil(() => seenSecond.length >= 5, 30_000);
    expect(seenSecond).toEqual(['m5', 'm6', 'm7', 'm8', 'm9']);
    await second.disconnect();
  }, 90_000);

  it('transactional producer: read_committed sees committed, not aborted, records', async () => {
    const topic = await newTopic();
    const producer = track(
      kafka.producer({
        transactionalId: `it-broker-tx-${suffix()}`,
        idempotent: true,
        maxInFlightRequests: 1,
      }),
    );
    await producer.connect();
    const sendIn = async (values: string[], commit: boolean): Promise<void> => {
      const tx = await producer.transaction();
      await tx.send({ topic, acks: -1, messages: values.map((value) => ({ value })) });
      if (commit) await tx.commit();
      else await tx.abort();
    };
    await sendIn(['a', 'b'], true);
    await sendIn(['c'], false);
    await sendIn(['d'], true);

    const read = async (readUncommitted: boolean, expectLast: string): Promise<string[]> => {
      const consumer = track(
        kafka.consumer({ groupId: `it-broker-txg-${suffix()}`, readUncommitted, maxWaitTimeInMs: 500 }),
      );
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value?.toString() ?? '');
        },
      });
      await waitUntil(() => seen.includes(expectLast), 30_000);
      await consumer.disconnect();
      return seen;
    };
    expect(await read(false, 'd')).toEqual(['a', 'b', 'd']);
    expect(await read(true, 'd')).toEqual(['a', 'b', 'c', 'd']);
  }, 120_000);
});
