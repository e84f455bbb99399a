import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  InvalidMessageError,
  SchemaRegistry,
  fromConsumedMessage,
  fromKafkaMessage,
  headersToStrings,
  kafkajsLogCreator,
  toKafkaMessage,
} from '../src/index.ts';
import type { LogSink } from '../src/index.ts';
import { toConsumedMessage } from '../src/consumer.ts';

const registry = new SchemaRegistry(fileURLToPath(new URL('./fixtures/schemas/good', import.meta.url)));

describe('toKafkaMessage / fromKafkaMessage', () => {
  it('round-trips through the shape kafkajs delivers (Buffer key and headers)', () => {
    const msg = toKafkaMessage(registry, {
      key: 'acc-1',
      type: 'Widget',
      version: 1,
      data: { id: 'w', count: 2 },
      headers: { 'oan-event-id': 'e-1', 'oan-type': 'spoofed' },
    });
    expect(msg.headers).toEqual({ 'oan-event-id': 'e-1', 'oan-type': 'Widget', 'oan-schema-version': '1' });
    const consumed = {
      key: Buffer.from('acc-1'),
      value: msg.value as Buffer,
      headers: Object.fromEntries(
        Object.entries(msg.headers ?? {}).map(([k, v]) => [k, Buffer.from(String(v))]),
      ),
      offset: '41',
      timestamp: '1700000000000',
      attributes: 0,
    };
    const rec = fromKafkaMessage(registry, consumed);
    expect(rec).toMatchObject({
      type: 'Widget',
      version: 1,
      key: 'acc-1',
      offset: '41',
      timestamp: '1700000000000',
    });
    expect(rec.headers).toEqual({ 'oan-event-id': 'e-1', 'oan-type': 'Widget', 'oan-schema-version': '1' });
    expect({ ...rec.data }).toEqual({ id: 'w', count: 2, label: null, color: 'red' });
    // As runConsumer hands it out (key and headers as strings already): the same record.
    expect(fromConsumedMessage(registry, toConsumedMessage(consumed))).toEqual(rec);
  });

  it('converts repeated headers (arrays) taking the last value', () => {
    expect(headersToStrings({ a: [Buffer.from('1'), '2'], b: undefined, c: 'x' })).toEqual({
      a: '2',
      c: 'x',
    });
  });

  it('takes headers that are all strings as they are, and drops a null value as an absent header', () => {
    const strings = { 'oan-type': 'Widget', 'oan-schema-version': '1' };
    expect(headersToStrings(strings)).toBe(strings);
    const withNull = { 'oan-type': 'Widget', gone: null, last: ['1', null] } as never;
    expect(headersToStrings(withNull)).toStrictEqual({ 'oan-type': 'Widget' });
    expect(headersToStrings({ a: '1', b: Buffer.from('2') })).toStrictEqual({ a: '1', b: '2' });
  });

  it('throws InvalidMessageError without type headers or value', () => {
    const base = { key: null, offset: '5', timestamp: '0' };
    expect(() => fromKafkaMessage(registry, { ...base, value: Buffer.alloc(1), headers: {} })).toThrow(
      InvalidMessageError,
    );
    expect(() =>
      fromKafkaMessage(registry, {
        ...base,
        value: null,
        headers: { 'oan-type': 'Widget', 'oan-schema-version': '1' },
      }),
    ).toThrow(/no value \(offset 5\)/);
  });
});

describe('kafkajsLogCreator', () => {
  it('maps kafkajs entries to the logger, retried error responses as warn', () => {
    const calls: Array<[string, Record<string, unknown>, string]> = [];
    const rec =
      (level: string) =>
      (obj: Record<string, unknown>, msg: string): void => {
        calls.push([level, obj, msg]);
      };
    const logger: LogSink = {
      debug: rec('debug'),
      info: rec('info'),
      warn: rec('warn'),
      error: rec('error'),
    };
    const log = kafkajsLogCreator(logger)(4);
    const ts = new Date().toISOString();
    log({
      namespace: 'Consumer',
      level: 1,
      label: 'ERROR',
      log: { timestamp: ts, message: 'Crash', groupId: 'g' },
    });
    log({
      namespace: 'Connection',
      level: 1,
      label: 'ERROR',
      log: { timestamp: ts, message: 'Response X', error: 'e' },
    });
    log({
      namespace: 'Producer',
      level: 1,
      label: 'ERROR',
      log: { timestamp: ts, message: 'Failed', retryCount: 0 },
    });
    log({ namespace: 'Runner', level: 4, label: 'INFO', log: { timestamp: ts, message: 'joined' } });
    expect(calls).toEqual([
      ['error', { component: 'kafkajs', namespace: 'Consumer', groupId: 'g' }, '[kafkajs Consumer] Crash'],
      [
        'warn',
        { component: 'kafkajs', namespace: 'Connection', error: 'e' },
        '[kafkajs Connection] Response X',
      ],
      ['warn', { component: 'kafkajs', namespace: 'Producer', retryCount: 0 }, '[kafkajs Producer] Failed'],
      ['info', { component: 'kafkajs', namespace: 'Runner' }, '[kafkajs Runner] joined'],
    ]);
  });
});
