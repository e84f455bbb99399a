// kafkajs 2.2.4 decodes each consumed record's headers with a reduce that copies the object built so
// far into a new one for every header (`{ ...obj, [key]: … }`): quadratic in a record's headers, with
// an object of garbage per header. Our records carry six to eight headers, so on a replay this reduce
// was the largest item of kafkajs's decoding (10 % of the replay's samples, `bench/replay.ts` under
// `--cpu-prof`) before the garbage collection it causes. The fix decodes the same fields into one
// object, reads each header name straight from the record's bytes (kafkajs cut a Buffer view for it
// first) and parses the batch's first offset and timestamp once per batch, not once per record
// (ADR 0053). Each header value comes out as a UTF-8 string read from the same bytes, not a Buffer
// view that every consumer turned into that string next (ADR 0056). Applied once, to the only
// kafkajs this repository installs, and only to the version it was written against.
import { createRequire } from 'node:module';
import { FIXED_KAFKAJS_VERSION } from './requestQueueFix.ts';

const require = createRequire(import.meta.url);

const RECORD_DECODER = 'kafkajs/src/protocol/recordBatch/record/v0/decoder.js';
/** The record batch decoder binds the record decoder when it loads: the fix must come first. */
const BATCH_DECODER = 'kafkajs/src/protocol/recordBatch/v0/decoder.js';

const FIXED = Symbol.for('oan.kafkajs.recordDecoderFix');
const ORIGINAL = Symbol.for('oan.kafkajs.recordDecoderFix.original');

/** kafkajs's header values are Buffers; the fixed decoder gives them as UTF-8 strings (ADR 0056). */
type HeaderValue = Buffer | string | null;
type Headers = Record<string, HeaderValue | HeaderValue[]>;

interface Decoder {
  readInt8(): number;
  readVarLong(): unknown;
  readVarInt(): number;
  readVarIntBytes(): Buffer | null;
  /** The record's bytes and the read position (kafkajs's Decoder fields). */
  buffer: Buffer;
  offset: number;
}

interface BatchContext {
  firstOffset?: string;
  firstTimestamp?: string;
  magicByte?: number;
  isControlBatch?: boolean;
  timestampType?: number;
  maxTimestamp?: string;
}

export type RecordDecoder = ((decoder: Decoder, batchContext?: BatchContext) => unknown) & {
  [FIXED]?: true;
  [ORIGINAL]?: RecordDecoder;
};

interface Long {
  add(other: unknown): Long;
  toString(): string;
}

/**
 * The record decoder kafkajs uses once the fix is in place, and the one it replaced: the same fields
 * in the same order, each header's values grouped as kafkajs groups them (a key seen again becomes an
 * array of its values). Undefined when the fix is not applied.
 */
export function recordDecoders(): { fixed: RecordDecoder; original: RecordDecoder } | undefined {
  const current = require.cache[require.resolve(RECORD_DECODER)]?.exports as RecordDecoder | undefined;
  const original = current?.[ORIGINAL];
  return current?.[FIXED] && original ? { fixed: current, original } : undefined;
}

/**
 * Makes kafkajs decode record headers in linear time; idempotent. Answers whether the fix is in place:
 * false for a kafkajs other than FIXED_KAFKAJS_VERSION, or when kafkajs already decoded a fetch in
 * this process without it (its batch decoder holds the old function then).
 */
export function fixRecordHeaderDecoding(): boolean {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  if (recordDecoders()) return true;
  if (require.cache[require.resolve(BATCH_DECODER)]) return false;
  const original = require(RECORD_DECODER) as RecordDecoder;
  const entry = require.cache[require.resolve(RECORD_DECODER)]!;
  const LongOf = require('kafkajs/src/utils/long.js') as { fromValue(v: unknown): Long };
  const { LOG_APPEND_TIME } = require('kafkajs/src/protocol/timestampTypes.js') as {
    LOG_APPEND_TIME: number;
  };

  const bases = new WeakMap<BatchContext, { offset: Long; timestamp: Long }>();
  const fixed: RecordDecoder = (decoder, batchContext = {}) => {
    const {
      firstOffset,
      firstTimestamp,
      magicByte,
      isControlBatch = false,
      timestampType,
      maxTimestamp,
    } = batchContext;
    const attributes = decoder.readInt8();
    const timestampDelta = decoder.readVarLong();
    // The batch's first offset and timestamp, parsed once per batch rather than once per record.
    let base = bases.get(batchContext);
    if (!base) {
      base = { offset: LongOf.fromValue(firstOffset), timestamp: LongOf.fromValue(firstTimestamp) };
      bases.set(batchContext, base);
    }
    const timestamp =
      timestampType === LOG_APPEND_TIME && maxTimestamp
        ? maxTimestamp
        : base.timestamp.add(timestampDelta).toString();
    const offsetDelta = decoder.readVarInt();
    const offset = base.offset.add(offsetDelta).toString();
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const headers: Headers = {};
    // kafkajs's HeaderDecoder and readVarIntArray, without a Buffer view for each name.
    const count = decoder.readVarInt();
    for (let i = 0; i < count; i++) {
      const keyLength = decoder.readVarInt();
      const at = decoder.offset;
      decoder.offset += Math.max(keyLength, 0);
      const name = keyLength === -1 ? String(null) : decoder.buffer.toString('utf8', at, at + keyLength);
      // The value as a UTF-8 string, read from the record's bytes: no Buffer view to convert later.
      const valueLength = decoder.readVarInt();
      let headerValue: HeaderValue = null;
      if (valueLength !== -1) {
        const from = decoder.offset;
        decoder.offset += valueLength;
        headerValue = decoder.buffer.toString('utf8', from, from + valueLength);
      }
      const seen = Object.hasOwn(headers, name) ? headers[name] : undefined;
      const grouped =
        seen === undefined ? headerValue : Array.isArray(seen) ? [...seen, headerValue] : [seen, headerValue];
      // A header named `__proto__` is a field like any other, as the spread made it, not a prototype.
      if (name === '__proto__') {
        Object.defineProperty(headers, name, {
          value: grouped,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else headers[name] = grouped;
    }
    return {
      magicByte,
      attributes,
      timestamp,
      offset,
      key,
      value,
      headers,
      isControlRecord: isControlBatch,
      batchContext,
    };
  };
  fixed[FIXED] = true;
  fixed[ORIGINAL] = original;
  entry.exports = fixed;
  return true;
}

/** One record as its producer wrote it: what `encodeRecord` writes and the decoders read back. */
export interface PlainRecord {
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  /** In the order written; a name may repeat. */
  headers: { key: string; value: Buffer | null }[];
}

interface Encoder {
  buffer: Buffer;
  writeInt8(v: number): Encoder;
  writeVarLong(v: number): Encoder;
  writeVarInt(v: number): Encoder;
  writeVarIntBytes(v: Buffer | null): Encoder;
  writeVarIntArray(v: Encoder[]): Encoder;
}

type Reader = Parameters<RecordDecoder>[0];

/** kafkajs's encoder, header encoder and decoder, loaded once on first use (not at import). */
let codec:
  | {
      EncoderOf: new () => Encoder;
      Header: (h: { key: string; value: Buffer | null }) => Encoder;
      DecoderOf: new (b: Buffer) => Reader;
    }
  | undefined;
const kafkajsCodec = () =>
  (codec ??= {
    EncoderOf: require('kafkajs/src/protocol/encoder.js') as new () => Encoder,
    Header: require('kafkajs/src/protocol/recordBatch/header/v0/index.js') as (h: {
      key: string;
      value: Buffer | null;
    }) => Encoder,
    DecoderOf: require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => Reader,
  });

/**
 * A record's bytes as a fetch response holds them (without the length the batch decoder reads
 * first), by kafkajs's own encoder: what the tests and `bench/kafka-decode.ts` decode.
 */
export function encodeRecord(r: PlainRecord): Buffer {
  const { EncoderOf, Header } = kafkajsCodec();
  return new EncoderOf()
    .writeInt8(0)
    .writeVarLong(r.timestampDelta)
    .writeVarInt(r.offsetDelta)
    .writeVarIntBytes(r.key)
    .writeVarIntBytes(r.value)
    .writeVarIntArray(r.headers.map(Header)).buffer;
}

/**
 * kafkajs's Decoder over a record's bytes, as the batch decoder hands one to a record decoder. Called
 * per record in `bench/kafka-decode.ts`'s timed loop, so kafkajs's module is looked up once, not here.
 */
export function recordReader(bytes: Buffer): Reader {
  return new (kafkajsCodec().DecoderOf)(bytes);
}
