// kafkajs's encoders with pooled buffers (src/encoderFix.ts), through the clients createKafka hands
// out, against the real broker: it checks every record batch's CRC, and the records come back as sent.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokersFromEnv, createKafka, encoderClass, silentLogger } from '../src/index.ts';
import type { KafkaHandle } from '../src/index.ts';
import { ensureBroker, uniqueSuffix, waitUntil } from './helpers.ts';

let kafka: KafkaHandle;
const topic = `it-enc-${uniqueSuffix()}`;

beforeAll(() => {
  ensureBroker();
  kafka = createKafka({ brokers: brokersFromEnv(), clientId: 'enc-int-test', logger: silentLogger });
}, 600_000);

afterAll(async () => {
  if (kafka) {
    await kafka.deleteTopics([topic]);
    await kafka.close();
  }
});

describe("records produced through createKafka's encoders", () => {
  it('come back byte for byte, small and large, in batches and alone', async () => {
    // createKafka applied the fix: an encoder starts empty, not with 512 zeroed bytes.
    const Encoder = encoderClass();
    expect(new Encoder().buf.length).toBe(0);

    await kafka.ensureTopics([{ topic }]);
    const producer = await kafka.producer();
    // Values from empty to 20 KiB (past Node's pool and through several growths), headers of each size.
    const sent = Array.from({ length: 40 }, (_, i) => ({
      key: `k${i % 3}`,
      value: randomBytes(i === 0 ? 0 : Math.floor(20_480 / (1 + (i % 7)) + i)),
      headers: { 'oan-type': `T${i}`, big: 'é'.repeat(i * 40), n: String(i) },
    }));
    await producer.send({ topic, messages: sent.slice(0, 30) });
    for (const m of sent.slice(30)) await producer.send({ topic, messages: [m] });

    const consumer = await kafka.consumer({ groupId: `it-enc-${uniqueSuffix()}` });
    const seen: { key: string; value: Buffer; headers: Record<string, unknown> }[] = [];
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({ key: String(message.key), value: message.value!, headers: message.headers ?? {} });
      },
    });
    try {
      await waitUntil(() => seen.length === sent.length, 30_000, 'the records');
    } finally {
      await consumer.stop();
    }
    expect(seen.map((m) => m.key)).toStrictEqual(sent.map((m) => m.key));
    expect(seen.every((m, i) => m.value.equals(sent[i]!.value))).toBe(true);
    expect(seen.map((m) => m.headers)).toStrictEqual(sent.map((m) => m.headers));
  });
});
