// kafkajs's record decoding with the linear header fix (src/recordDecoderFix.ts), consumed from the
// real broker through the clients createKafka hands out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokersFromEnv, createKafka, runConsumer, silentLogger } from '../src/index.ts';
import type { KafkaHandle } from '../src/index.ts';
import { recordDecoders } from '../src/recordDecoderFix.ts';
import { ensureBroker, uniqueSuffix, waitUntil } from './helpers.ts';

let kafka: KafkaHandle;
const topic = `it-rdf-${uniqueSuffix()}`;

beforeAll(() => {
  ensureBroker();
  kafka = createKafka({ brokers: brokersFromEnv(), clientId: 'rdf-int-test', logger: silentLogger });
}, 600_000);

afterAll(async () => {
  if (kafka) {
    await kafka.deleteTopics([topic]);
    await kafka.close();
  }
});

describe('records consumed with the header-decoding fix', () => {
  it('hands out every header as it was produced, repeated ones grouped, through the fixed decoder', async () => {
    expect(recordDecoders()).toBeDefined();
    await kafka.ensureTopics([{ topic }]);
    const producer = await kafka.producer();
    await producer.send({
      topic,
      messages: [
        { key: 'k1', value: 'one', headers: { 'oan-type': 'A', toString: 'seen', x: ['1', '2'] } },
        { key: 'k1', value: 'two', headers: {} },
      ],
    });
    const raw = await kafka.consumer({ groupId: `it-rdf-raw-${uniqueSuffix()}` });
    const seen: { value: string; headers: Record<string, unknown> }[] = [];
    await raw.subscribe({ topic, fromBeginning: true });
    await raw.run({
      eachMessage: async ({ message }) => {
        seen.push({ value: String(message.value), headers: message.headers ?? {} });
      },
    });
    await waitUntil(() => seen.length === 2, 30_000);
    await raw.stop();
    // kafkajs's own reduce would give `toString` as [Object.prototype.toString, <seen>], and Buffers:
    // this one is the fixed decoder's, each value a UTF-8 string (ADR 0056).
    expect(seen[0]).toStrictEqual({
      value: 'one',
      headers: { 'oan-type': 'A', toString: 'seen', x: ['1', '2'] },
    });
    expect(seen[1]).toStrictEqual({ value: 'two', headers: {} });

    // And as runConsumer hands them to the services: strings, the last of a repeated header.
    const strings: Record<string, string>[] = [];
    const consumer = await runConsumer({
      kafka,
      groupId: `it-rdf-${uniqueSuffix()}`,
      topics: [topic],
      fromBeginning: true,
      eachBatch: async (b) => {
        for (const m of b.messages) strings.push(m.headers);
        if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
      },
    });
    try {
      await waitUntil(() => strings.length === 2, 30_000);
      const expected: Record<string, string>[] = [{ 'oan-type': 'A', toString: 'seen', x: '2' }, {}];
      expect(strings).toStrictEqual(expected);
    } finally {
      await consumer.stop();
    }
  });
});
