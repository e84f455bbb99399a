// Sender.sendPlaced against the real broker (infra/kafka/start.sh is run if nothing answers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokersFromEnv, createKafka, silentLogger, type KafkaHandle } from '../src/index.ts';
import { ensureBroker, uniqueSuffix, waitUntil } from './helpers.ts';

let kafka: KafkaHandle;
const topics: string[] = [];

beforeAll(() => {
  ensureBroker();
  kafka = createKafka({ brokers: brokersFromEnv(), clientId: 'placement-int-test', logger: silentLogger });
}, 600_000);

afterAll(async () => {
  if (kafka) {
    await kafka.deleteTopics(topics);
    await kafka.close();
  }
}, 60_000);

async function newTopic(numPartitions: number): Promise<string> {
  const topic = `it-placement-${uniqueSuffix()}`;
  topics.push(topic);
  await kafka.ensureTopics([{ topic, numPartitions }]);
  return topic;
}

/** Every record of `topic` as `partition:offset → value`. */
async function readAll(topic: string, count: number): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const consumer = await kafka.consumer({ groupId: `it-placement-${uniqueSuffix()}` });
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      seen.set(`${partition}:${message.offset}`, message.value?.toString() ?? '');
    },
  });
  try {
    await waitUntil(() => seen.size >= count, 30_000, `${count} records on ${topic}`);
  } finally {
    await consumer.stop();
  }
  return seen;
}

describe('Sender.sendPlaced on a topic of 4 partitions', () => {
  const keys = Array.from({ length: 24 }, (_, i) => `account-${i}-${uniqueSuffix()}`);

  it('puts each key on the partition a send with the key only picks', async () => {
    const topic = await newTopic(4);
    const sender = await kafka.sender();
    const placed = await sender.sendPlaced({
      topic,
      acks: -1,
      messages: keys.map((key) => ({ key, value: `placed ${key}` })),
    });
    const chosen = await Promise.all(
      keys.map(async (key) => {
        const [answer] = await sender.send({ topic, acks: -1, messages: [{ key, value: `plain ${key}` }] });
        return answer?.partition;
      }),
    );
    expect(placed.map((p) => p.partition)).toEqual(chosen);
    expect(new Set(chosen).size).toBeGreaterThan(1);
  });

  it('answers each message its offset, in the order given, across partitions', async () => {
    const topic = await newTopic(4);
    const sender = await kafka.sender();
    // Two sends, each with two messages per key, interleaved: offsets continue across sends.
    const batch = (round: number) =>
      keys.flatMap((key) => [0, 1].map((i) => ({ key, value: `${key} ${round}.${i}` })));
    const messages = [...batch(0), ...batch(1)];
    const placed = [
      ...(await sender.sendPlaced({ topic, acks: -1, messages: batch(0) })),
      ...(await sender.sendPlaced({ topic, acks: -1, messages: batch(1) })),
    ];

    const log = await readAll(topic, messages.length);
    expect(placed.map((p) => log.get(`${p.partition}:${p.offset}`))).toEqual(messages.map((m) => m.value));
  });
});
