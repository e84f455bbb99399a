// The record decoder that replaces kafkajs's (src/recordDecoderFix.ts) against kafkajs's own, on
// records encoded by kafkajs's own encoder.
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { headersToStrings } from '../src/index.ts';
import {
  encodeRecord,
  fixRecordHeaderDecoding,
  recordDecoders,
  recordReader,
  type RecordDecoder,
} from '../src/recordDecoderFix.ts';

const context = {
  firstOffset: '9007199254740993',
  firstTimestamp: '1764892800000',
  magicByte: 2,
  isControlBatch: false,
  timestampType: 0,
  maxTimestamp: '1764892900000',
};

/** kafkajs's decoding with each header value as a UTF-8 string, as the fixed decoder gives it (ADR 0056). */
function asStrings<T>(decoded: T): T {
  const { headers } = decoded as { headers: Record<string, unknown> };
  const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString('utf8') : v);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(headers)) {
    const v = headers[name];
    const value = Array.isArray(v) ? v.map(text) : text(v);
    Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true });
  }
  return { ...decoded, headers: out };
}

let fixed: RecordDecoder;
let original: RecordDecoder;
const decode = (d: RecordDecoder, bytes: Buffer, ctx: object = context) =>
  d(recordReader(bytes), ctx) as { headers: Record<string, unknown> };

beforeAll(() => {
  expect(fixRecordHeaderDecoding()).toBe(true);
  ({ fixed, original } = recordDecoders()!);
  // kafkajs's batch decoder, loaded after the fix, binds the fixed decoder.
  expect(createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/record/v0/decoder.js')).toBe(fixed);
  expect(fixed).not.toBe(original);
});

const bytes = fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)));
// Header names as producers write them, repeated often, and a null name (kafkajs names it "null");
// names Object.prototype has apart (below).
const headerKey = fc.oneof(
  fc.constantFrom('oan-type', 'oan-schema-version', 'oan-event-id', 'a', '', null as unknown as string),
  fc.string({ unit: 'grapheme', maxLength: 12 }).filter((k) => !(k in Object.prototype)),
);
const record = fc.record({
  timestampDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  offsetDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  key: bytes,
  value: bytes,
  headers: fc.array(fc.record({ key: headerKey, value: bytes }), { maxLength: 12 }),
});

describe("kafkajs's record decoder with linear header decoding", () => {
  it('decodes any batch of records exactly as kafkajs does: fields, offsets, timestamps and grouped headers', () => {
    const int64 = fc.bigInt({ min: 0n, max: 2n ** 62n }).map(String);
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 4 }),
        int64,
        int64,
        fc.constantFrom(0, 1),
        (batch, firstOffset, firstTimestamp, timestampType) => {
          // One context per batch, shared by its records, as kafkajs's batch decoder passes it.
          const ctx = { ...context, firstOffset, firstTimestamp, timestampType };
          for (const r of batch) {
            const bytesOf = encodeRecord(r);
            expect(decode(fixed, bytesOf, ctx)).toStrictEqual(asStrings(decode(original, bytesOf, ctx)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('groups a repeated header into its values in order, and a third one too', () => {
    const r = encodeRecord({
      timestampDelta: 5,
      offsetDelta: 2,
      key: Buffer.from('k'),
      value: null,
      headers: [
        { key: 'x', value: Buffer.from('1') },
        { key: 'y', value: null },
        { key: 'x', value: Buffer.from('2') },
        { key: 'x', value: Buffer.from('3') },
      ],
    });
    const out = decode(fixed, r) as { headers: Record<string, unknown>; offset: string; timestamp: string };
    expect(out.headers).toStrictEqual({ x: ['1', '2', '3'], y: null });
    expect(out.offset).toBe('9007199254740995');
    expect(out.timestamp).toBe('1764892800005');
    expect(out).toStrictEqual(asStrings(decode(original, r)));
  });

  it('takes the batch timestamp for log-append time, as kafkajs does', () => {
    const r = encodeRecord({ timestampDelta: 5, offsetDelta: 0, key: null, value: null, headers: [] });
    const appendTime = { ...context, timestampType: 1 };
    expect(decode(fixed, r, appendTime)).toStrictEqual(asStrings(decode(original, r, appendTime)));
    expect((decode(fixed, r, appendTime) as { timestamp?: string }).timestamp).toBe('1764892900000');
  });

  it('keeps a header named __proto__ as a field with its value, never as the prototype', () => {
    const r = encodeRecord({
      timestampDelta: 0,
      offsetDelta: 0,
      key: null,
      value: null,
      headers: [
        { key: '__proto__', value: Buffer.from('p') },
        { key: 'oan-type', value: Buffer.from('T') },
      ],
    });
    const { headers } = decode(fixed, r);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    expect(Object.keys(headers)).toEqual(['__proto__', 'oan-type']);
    expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('p');
  });

  it("reads a header named like an inherited property as its value, where kafkajs's reduce paired it with that property", () => {
    // A last value wins in headersToStrings, so the string a consumer reads was the same.
    const r0 = encodeRecord({
      timestampDelta: 0,
      offsetDelta: 0,
      key: null,
      value: null,
      headers: [{ key: 'toString', value: Buffer.from('v') }],
    });
    expect(headersToStrings(decode(fixed, r0).headers as never)).toStrictEqual({ toString: 'v' });
    expect(headersToStrings(decode(original, r0).headers as never)).toStrictEqual({ toString: 'v' });
    for (const name of ['toString', '__proto__', 'constructor']) {
      const r = encodeRecord({
        timestampDelta: 0,
        offsetDelta: 0,
        key: null,
        value: null,
        headers: [{ key: name, value: Buffer.from('v') }],
      });
      const inherited = ({} as Record<string, unknown>)[name];
      expect(Object.getOwnPropertyDescriptor(decode(fixed, r).headers, name)?.value).toBe('v');
      // kafkajs found the inherited property and grouped it with the value.
      expect(Object.getOwnPropertyDescriptor(decode(original, r).headers, name)?.value).toEqual([
        inherited,
        Buffer.from('v'),
      ]);
    }
  });
});
