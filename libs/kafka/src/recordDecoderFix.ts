// kafkajs 2.2.4 decodes each consumed record's headers with a reduce that copies the object built so
// far into a new one for every header (`{ ...obj, [key]: … }`): quadratic in a record's headers, with
// an object of garbage per header. Our records carry six to eight headers, so on a replay this reduce
// was the largest item of kafkajs's decoding (10 % of the replay's samples, `bench/replay.ts` under
// `--cpu-prof`) before the garbage collection it causes. The fix decodes the same fields into one
// object (ADR 0053). Applied once, to the only kafkajs this repository installs, and only to the
// version it was written against.
import { createRequire } from 'node:module';
import { FIXED_KAFKAJS_VERSION } from './requestQueueFix.ts';

const require = createRequire(import.meta.url);

const RECORD_DECODER = 'kafkajs/src/protocol/recordBatch/record/v0/decoder.js';
/** The record batch decoder binds the record decoder when it loads: the fix must come first. */
const BATCH_DECODER = 'kafkajs/src/protocol/recordBatch/v0/decoder.js';

const FIXED = Symbol.for('oan.kafkajs.recordDecoderFix');
const ORIGINAL = Symbol.for('oan.kafkajs.recordDecoderFix.original');

type HeaderValue = Buffer | null;
type Headers = Record<string, HeaderValue | HeaderValue[]>;

interface Decoder {
  readInt8(): number;
  readVarLong(): unknown;
  readVarInt(): number;
  readVarIntBytes(): Buffer | null;
  readVarIntArray<T>(reader: (d: Decoder) => T): T[];
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
  const HeaderDecoder = require('kafkajs/src/protocol/recordBatch/header/v0/decoder.js') as (d: Decoder) => {
    key: string;
    value: HeaderValue;
  };
  const { LOG_APPEND_TIME } = require('kafkajs/src/protocol/timestampTypes.js') as {
    LOG_APPEND_TIME: number;
  };

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
    const timestamp =
      timestampType === LOG_APPEND_TIME && maxTimestamp
        ? maxTimestamp
        : LongOf.fromValue(firstTimestamp).add(timestampDelta).toString();
    const offsetDelta = decoder.readVarInt();
    const offset = LongOf.fromValue(firstOffset).add(offsetDelta).toString();
    const key = decoder.readVarIntBytes();
    const value = decoder.readVarIntBytes();
    const headers: Headers = {};
    for (const header of decoder.readVarIntArray(HeaderDecoder)) {
      const seen = Object.hasOwn(headers, header.key) ? headers[header.key] : undefined;
      const grouped =
        seen === undefined
          ? header.value
          : Array.isArray(seen)
            ? [...seen, header.value]
            : [seen, header.value];
      // A header named `__proto__` is a field like any other, as the spread made it, not a prototype.
      if (header.key === '__proto__') {
        Object.defineProperty(headers, header.key, {
          value: grouped,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else headers[header.key] = grouped;
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
