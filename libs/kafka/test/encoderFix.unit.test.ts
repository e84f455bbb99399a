// kafkajs's Encoders with their buffers from Node's pool (src/encoderFix.ts): the same bytes as
// kafkajs's own allocation, for whole requests as a connection sends them.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { encoderClass, fixEncoderBuffers, withOriginalEncoder } from '../src/encoderFix.ts';

const require = createRequire(import.meta.url);
type Request = { apiKey: number; apiVersion: number; encode: () => Promise<unknown> };
/** kafkajs's framing of a request (size, header, payload), as its Connection sends it. */
const frame = require('kafkajs/src/protocol/request.js') as (r: {
  correlationId: number;
  clientId: string;
  request: Request;
}) => Promise<{ buffer: Buffer }>;
const produceV3 = require('kafkajs/src/protocol/requests/produce/v3/request.js') as (a: object) => Request;
const produceV7 = require('kafkajs/src/protocol/requests/produce/v7/request.js') as (a: object) => Request;
const fetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/request.js') as (a: object) => Request;

/** The request's bytes, copied out (a view of a pooled buffer could be overwritten later). */
const bytes = async (request: Request) =>
  Buffer.from((await frame({ correlationId: 7, clientId: 'encoder-test', request })).buffer);

beforeAll(() => {
  expect(fixEncoderBuffers()).toBe(true);
});

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const payload = fc.oneof(
  fc.constant(null),
  text,
  // up to 9 KiB: past the first 512-byte buffer, past Node's pool (4 KiB), through several growths
  fc.uint8Array({ maxLength: 9 * 1024 }).map((a) => Buffer.from(a)),
);
const message = fc.record({
  key: payload,
  value: payload,
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }).map(String),
  headers: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.oneof(
      text,
      fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
    ),
    { maxKeys: 8 },
  ),
});
const topicData = fc.array(
  fc.record({
    topic: fc.string({ minLength: 1, maxLength: 20 }),
    partitions: fc.array(
      fc.record({
        partition: fc.nat(63),
        firstSequence: fc.nat(1000),
        messages: fc.array(message, { minLength: 1, maxLength: 5 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
  { minLength: 1, maxLength: 2 },
);

describe("kafkajs's encoders with buffers from Node's pool", () => {
  it('encode every produce request to the bytes kafkajs encodes without the fix', async () => {
    await fc.assert(
      fc.asyncProperty(topicData, fc.constantFrom(produceV3, produceV7), async (data, produce) => {
        const args = { acks: -1, timeout: 30_000, producerId: 12, producerEpoch: 3, topicData: data };
        const fixed = await bytes(produce(args));
        const original = await withOriginalEncoder(() => bytes(produce(args)));
        expect(fixed.equals(original)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('encode a fetch request to the same bytes', async () => {
    const args = {
      replicaId: -1,
      isolationLevel: 1,
      maxWaitTime: 5000,
      minBytes: 1,
      maxBytes: 10_485_760,
      sessionId: 0,
      sessionEpoch: -1,
      rackId: '',
      topics: Array.from({ length: 40 }, (_, i) => ({
        topic: `oan.topic-${i}`,
        partitions: [{ partition: i % 4, fetchOffset: String(2 ** 40 + i), maxBytes: 1_048_576 }],
      })),
    };
    const fixed = await bytes(fetchV11(args));
    expect(fixed.equals(await withOriginalEncoder(() => bytes(fetchV11(args))))).toBe(true);
  });

  it("take an encoder's first buffer from Node's pool, not a zero-filled buffer of its own", async () => {
    const Encoder = encoderClass();
    const fixed = new Encoder();
    expect(fixed.buf.length).toBe(0);
    (fixed as unknown as { writeInt32(v: number): void }).writeInt32(1);
    expect(fixed.buf.length).toBe(512);
    expect(fixed.buf.buffer.byteLength).toBe(Buffer.poolSize);
    const original = await withOriginalEncoder(async () => new Encoder());
    expect(original.buf.buffer.byteLength).toBe(512);
    expect(original.buf.every((b) => b === 0)).toBe(true);
  });

  it('is idempotent, and put back after a comparison', async () => {
    const Encoder = encoderClass();
    const ensure = Encoder.prototype.ensureAvailable;
    expect(fixEncoderBuffers()).toBe(true);
    await withOriginalEncoder(async () => expect(Encoder.prototype.ensureAvailable).not.toBe(ensure));
    expect(Encoder.prototype.ensureAvailable).toBe(ensure);
    expect(new Encoder().buf.length).toBe(0);
  });
});
