/**
 * kafkajs's record decoding with and without the header-decoding fix (libs/kafka recordDecoderFix,
 * ADR 0053), in this process, with no broker: records shaped like the domain topics' (the seven
 * headers `domainHeaders` writes, a 600-byte value) encoded once by kafkajs's own encoder, then
 * decoded by both decoders in alternating rounds, each followed by `headersToStrings` as
 * `runConsumer` does. Usage:
 *   bash infra/node.sh node bench/kafka-decode.ts [records=50000] [rounds=6]
 * Prints records/s per round and decoder, the median of each and their ratio, and the load average;
 * writes docs/bench/kafka-decode.json and its chart docs/bench/kafka-decode.svg.
 */
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { fixRecordHeaderDecoding, headersToStrings, recordDecoders } from '@oan/kafka';
import { barChart } from './chart.ts';
import { loadAverage } from './cost.ts';

const N = Number(process.argv[2] ?? 50_000);
const ROUNDS = Number(process.argv[3] ?? 6);

const require = createRequire(import.meta.url);
interface Encoder {
  buffer: Buffer;
  writeInt8(v: number): Encoder;
  writeVarLong(v: number): Encoder;
  writeVarInt(v: number): Encoder;
  writeVarIntBytes(v: Buffer | null): Encoder;
  writeVarIntArray(v: Encoder[]): Encoder;
}
const EncoderOf = require('kafkajs/src/protocol/encoder.js') as new () => Encoder;
const DecoderOf = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => never;
const Header = require('kafkajs/src/protocol/recordBatch/header/v0/index.js') as (h: {
  key: string;
  value: Buffer;
}) => Encoder;

console.log(`load average at the start: ${loadAverage()}`);
if (!fixRecordHeaderDecoding()) throw new Error('the header-decoding fix does not apply to this kafkajs');
const { fixed, original } = recordDecoders()!;

const value = Buffer.alloc(600, 7);
const records = Array.from({ length: N }, (_, i) => {
  const headers = {
    'oan-type': 'GoferCreated',
    'oan-schema-version': '1',
    'oan-event-id': randomUUID(),
    'oan-stream-id': `gofer-${randomUUID()}`,
    'oan-stream-version': String(1 + (i % 5)),
    'oan-occurred-at': new Date(1_764_892_800_000 + i).toISOString(),
    'oan-position': String(1_000_000 + i),
  };
  return new EncoderOf()
    .writeInt8(0)
    .writeVarLong(i)
    .writeVarInt(i)
    .writeVarIntBytes(Buffer.from(`acc-${i % 24}`))
    .writeVarIntBytes(value)
    .writeVarIntArray(Object.entries(headers).map(([key, v]) => Header({ key, value: Buffer.from(v) })))
    .buffer;
});
const context = { firstOffset: '0', firstTimestamp: '1764892800000', magicByte: 2, timestampType: 0 };

function round(decode: typeof fixed): number {
  const t0 = performance.now();
  let check = 0;
  for (const bytes of records) {
    const r = decode(new DecoderOf(bytes), context) as { headers: Record<string, Buffer> };
    check += headersToStrings(r.headers)['oan-position']!.length;
  }
  const ms = performance.now() - t0;
  if (check === 0) throw new Error('nothing decoded');
  return (N * 1000) / ms;
}

const rates: Record<'original' | 'fixed', number[]> = { original: [], fixed: [] };
round(original);
round(fixed); // warm both
for (let i = 0; i < ROUNDS; i++) {
  for (const name of i % 2 === 0 ? (['original', 'fixed'] as const) : (['fixed', 'original'] as const)) {
    const rate = round(name === 'fixed' ? fixed : original);
    rates[name].push(rate);
    console.log(`round ${i + 1} ${name.padEnd(8)} ${Math.round(rate)} records/s`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const o = median(rates.original);
const f = median(rates.fixed);
console.log(
  `${N} records of 7 headers, median of ${ROUNDS} rounds: kafkajs's decoder ${Math.round(o)} records/s ` +
    `(${(1e6 / o).toFixed(2)} µs each), fixed ${Math.round(f)} records/s (${(1e6 / f).toFixed(2)} µs each): ` +
    `${(f / o).toFixed(2)}×`,
);
const chart = await barChart(
  'kafka-decode',
  [
    { label: "kafkajs 2.2.4's record decoder, records/s (median round)", value: o },
    { label: "libs/kafka's record decoder (ADR 0053), records/s (median round)", value: f },
  ],
  { title: `${N} records of 7 headers decoded, headers made strings`, unit: 'records per second' },
);
console.log(`chart: ${chart}`);
console.log(`load average at the end: ${loadAverage()}`);
