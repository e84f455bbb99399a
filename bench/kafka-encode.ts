/**
 * kafkajs's request encoding with and without the encoder fix (libs/kafka encoderFix, ADR 0061), in
 * this process, with no broker: produce requests (version 7, as kafkajs sends them to Kafka 4) of
 * records shaped like the domain topics' (the seven headers `domainHeaders` writes, a 600-byte
 * value, no timestamp: kafkajs stamps each with the time of the request, as the fleet sends them), framed as kafkajs's connection frames them, one record and ten records a request, in
 * alternating rounds. Timed by this process's CPU (`process.cpuUsage`), so the garbage collection
 * the allocations cause counts. Usage:
 *   bash infra/node.sh node bench/kafka-encode.ts [requests=20000] [rounds=6]
 * Prints µs of CPU per request per round and encoder, the median of each and their ratio, and the
 * load average; writes docs/bench/kafka-encode.json and its chart docs/bench/kafka-encode.svg.
 */
import { createRequire } from 'node:module';
import { fixEncoderBuffers, withOriginalEncoder } from '@oan/kafka';
import { barChart } from './chart.ts';
import { domainRecordHeaders } from './domainRecords.ts';
import { loadAverage } from './cost.ts';
import { median } from './stats.ts';

const N = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 6);

console.log(`load average at the start: ${loadAverage()}`);
if (!fixEncoderBuffers()) throw new Error('the encoder fix does not apply to this kafkajs');

const require = createRequire(import.meta.url);
type Request = { encode: () => Promise<unknown> };
const frame = require('kafkajs/src/protocol/request.js') as (r: {
  correlationId: number;
  clientId: string;
  request: Request;
}) => Promise<{ buffer: Buffer }>;
const produce = require('kafkajs/src/protocol/requests/produce/v7/request.js') as (a: object) => Request;

const value = Buffer.alloc(600, 7);
const message = (i: number) => ({
  key: `acc-${i % 24}`,
  value,
  headers: domainRecordHeaders(i),
});
const requestOf = (records: number) => ({
  acks: -1,
  timeout: 30_000,
  producerId: 12,
  producerEpoch: 0,
  topicData: [
    {
      topic: 'bench.gofers.events',
      partitions: [
        { partition: 1, firstSequence: 0, messages: Array.from({ length: records }, (_, i) => message(i)) },
      ],
    },
  ],
});

/** µs of this process's CPU per framed request, over N requests. */
async function round(records: number): Promise<number> {
  const args = requestOf(records);
  let bytes = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    bytes += (await frame({ correlationId: i, clientId: 'bench', request: produce(args) })).buffer.length;
  }
  const c = process.cpuUsage(c0);
  if (bytes === 0) throw new Error('nothing encoded');
  return (c.user + c.system) / N;
}

type Name = 'original' | 'fixed';
const timed = (name: Name, records: number) =>
  name === 'fixed' ? round(records) : withOriginalEncoder(() => round(records));

const sizes = [1, 10] as const;
const cost: Record<Name, Record<number, number[]>> = {
  original: { 1: [], 10: [] },
  fixed: { 1: [], 10: [] },
};
for (const records of sizes) {
  await timed('original', records);
  await timed('fixed', records); // warm both
}
for (let i = 0; i < ROUNDS; i++) {
  for (const name of i % 2 === 0 ? (['original', 'fixed'] as const) : (['fixed', 'original'] as const)) {
    for (const records of sizes) {
      const us = await timed(name, records);
      cost[name][records]!.push(us);
      console.log(
        `round ${i + 1} ${name.padEnd(8)} ${String(records).padStart(2)} records a request: ${us.toFixed(1)} µs`,
      );
    }
  }
}
const rows: { label: string; value: number }[] = [];
for (const records of sizes) {
  const o = median(cost.original[records]!);
  const f = median(cost.fixed[records]!);
  console.log(
    `${N} produce requests of ${records} record(s) of 7 headers, median of ${ROUNDS} rounds: ` +
      `kafkajs's encoders ${o.toFixed(1)} µs of CPU each, fixed ${f.toFixed(1)} µs: ${(o / f).toFixed(2)}× less`,
  );
  rows.push(
    { label: `kafkajs 2.2.4, ${records} record(s) a request`, value: o },
    { label: `with libs/kafka's encoder fix (ADR 0061), ${records} record(s)`, value: f },
  );
}
const chart = await barChart('kafka-encode', rows, {
  title: `produce requests encoded and framed (median round of ${N})`,
  unit: 'µs of CPU per request',
});
console.log(`chart: ${chart}`);
console.log(`load average at the end: ${loadAverage()}`);
