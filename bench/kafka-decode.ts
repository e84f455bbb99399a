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
import {
  encodeRecord,
  fixRecordHeaderDecoding,
  headersToStrings,
  recordDecoders,
  recordReader,
} from '@oan/kafka';
import { barChart } from './chart.ts';
import { domainRecordHeaders } from './domainRecords.ts';
import { loadAverage } from './cost.ts';
import { median } from './stats.ts';

const N = Number(process.argv[2] ?? 50_000);
const ROUNDS = Number(process.argv[3] ?? 6);

console.log(`load average at the start: ${loadAverage()}`);
if (!fixRecordHeaderDecoding()) throw new Error('the header-decoding fix does not apply to this kafkajs');
const { fixed, original } = recordDecoders()!;

const value = Buffer.alloc(600, 7);
const records = Array.from({ length: N }, (_, i) => {
  const headers = domainRecordHeaders(i);
  return encodeRecord({
    timestampDelta: i,
    offsetDelta: i,
    key: Buffer.from(`acc-${i % 24}`),
    value,
    headers: Object.entries(headers).map(([key, v]) => ({ key, value: Buffer.from(v) })),
  });
});
const context = { firstOffset: '0', firstTimestamp: '1764892800000', magicByte: 2, timestampType: 0 };

function round(decode: typeof fixed): number {
  const t0 = performance.now();
  let check = 0;
  for (const bytes of records) {
    const r = decode(recordReader(bytes), context) as { headers: Record<string, Buffer> };
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
