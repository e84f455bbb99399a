// Between our records ({ key, type, version, data }) and kafkajs messages (Avro value + oan-* headers).
import type { IHeaders, Message } from 'kafkajs';
import { InvalidMessageError } from './errors.ts';
import { HEADER_SCHEMA_VERSION, HEADER_TYPE } from './schema-registry.ts';
import type { SchemaRegistry } from './schema-registry.ts';

export interface OutgoingRecord<T = unknown> {
  /** Partitioning key (e.g. accountId); null = no key. */
  key: string | null;
  type: string;
  /** Schema version to write with; default: the latest. */
  version?: number;
  data: T;
  /** Extra headers; `oan-type` and `oan-schema-version` are always set from type/version. */
  headers?: Record<string, string>;
}

/** What @oan/kafka needs from a consumed message: a kafkajs `KafkaMessage` or a `ConsumedMessage`. */
export interface RawMessage {
  key: Buffer | string | null;
  value: Buffer | null;
  headers?: IHeaders | Record<string, string>;
  offset: string;
  timestamp: string;
}

export interface LogRecord<T = Record<string, unknown>> {
  type: string;
  /** The writer's schema version (data is already resolved to the latest version). */
  version: number;
  data: T;
  headers: Record<string, string>;
  key: string | null;
  offset: string;
  /** Milliseconds since the epoch, as kafkajs gives it. */
  timestamp: string;
}

export function toKafkaMessage<T>(registry: SchemaRegistry, record: OutgoingRecord<T>): Message {
  const encoded = registry.encode(record.type, record.data, record.version);
  return {
    key: record.key,
    value: encoded.value,
    headers: { ...record.headers, ...encoded.headers },
  };
}

/**
 * kafkajs headers (Buffer | string | array, repeated keys grouped) -> strings; the last value wins.
 * Headers that are all strings already (what the fixed record decoder gives for a record without a
 * repeated or null header, ADR 0056) are returned as they are, not copied.
 */
export function headersToStrings(
  headers: IHeaders | Record<string, string> | undefined,
): Record<string, string> {
  if (!headers) return {};
  let strings = true;
  for (const name in headers) {
    if (typeof headers[name] !== 'string') {
      strings = false;
      break;
    }
  }
  if (strings) return headers as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    // A null value (a header written without one) is no value, as an absent header.
    if (value === undefined || value === null) continue;
    out[name] = typeof value === 'string' ? value : value.toString('utf8');
  }
  return out;
}

export function keyToString(key: Buffer | string | null): string | null {
  if (key === null) return null;
  return typeof key === 'string' ? key : key.toString('utf8');
}

/** Decodes a consumed message with its writer schema into the latest version of its type. */
export function fromKafkaMessage<T = Record<string, unknown>>(
  registry: SchemaRegistry,
  message: RawMessage,
): LogRecord<T> {
  return fromConsumedMessage<T>(registry, {
    ...message,
    key: keyToString(message.key),
    headers: headersToStrings(message.headers),
  });
}

/**
 * `fromKafkaMessage` for a message whose key and headers are strings already (a `ConsumedMessage`, as
 * `runConsumer` hands them out): they are used as they are, not converted again.
 */
export function fromConsumedMessage<T = Record<string, unknown>>(
  registry: SchemaRegistry,
  message: Omit<RawMessage, 'key' | 'headers'> & { key: string | null; headers: Record<string, string> },
): LogRecord<T> {
  const headers = message.headers;
  const type = headers[HEADER_TYPE];
  const versionText = headers[HEADER_SCHEMA_VERSION];
  if (type === undefined || versionText === undefined) {
    throw new InvalidMessageError(`missing ${HEADER_TYPE}/${HEADER_SCHEMA_VERSION} header`, message.offset);
  }
  if (message.value === null) throw new InvalidMessageError('message has no value', message.offset);
  const version = Number(versionText);
  return {
    type,
    version,
    data: registry.decode<T>(type, version, message.value),
    headers,
    key: message.key,
    offset: message.offset,
    timestamp: message.timestamp,
  };
}
