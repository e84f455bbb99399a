/**
 * The broker's own CPU per record, round by round, from where it stands now: records sent alone
 * (idempotent producer, acks=-1) and fetched by one consumer group, as `bench/floor.ts` prices a
 * record, `round` at a time at `rate`/s on a topic of `partitions` partitions. Run it right after
 * `infra/kafka/start.sh` to see the broker's JIT warm up (every fleet-driving script warms it first,
 * `warmBroker` in bench/cost.ts), or on a warm broker for its steady cost per record. Usage:
 *   bash infra/node.sh node bench/broker.ts [rate=500] [round=5000] [rounds=4] [partitions=1]
 * Prints the broker's idle CPU (5 s, before the rounds), each round's CPU per record with and without
 * that idle share, and the load average.
 */
import { randomBytes } from 'node:crypto';
import { brokersFromEnv } from '@oan/kafka';
import { brokerCpuPerRecord, brokerCpuSeconds, loadAverage } from './cost.ts';

const RATE = Number(process.argv[2] ?? 500);
const ROUND = Number(process.argv[3] ?? 5000);
const ROUNDS = Number(process.argv[4] ?? 4);
const PARTITIONS = Number(process.argv[5] ?? 1);
const brokers = brokersFromEnv();

console.log(`load average at the start: ${loadAverage()}`);
const idle0 = brokerCpuSeconds();
await new Promise((resolve) => setTimeout(resolve, 5000));
const idleMsPerSecond = ((brokerCpuSeconds() - idle0) * 1000) / 5;
console.log(`the broker idle: ${idleMsPerSecond.toFixed(0)} ms of CPU a second`);
const rounds = await brokerCpuPerRecord(brokers, `broker-${randomBytes(4).toString('hex')}-`, {
  round: ROUND,
  rate: RATE,
  rounds: ROUNDS,
  partitions: PARTITIONS,
});
// A round that keeps up takes round / rate seconds; its idle share is that long.
const idleShare = idleMsPerSecond / RATE;
rounds.forEach((ms, r) =>
  console.log(
    `round ${r}: ${ROUND} records alone at ${RATE}/s, ${PARTITIONS} partition(s): the broker's CPU ${ms.toFixed(3)} ms a record (${(ms - idleShare).toFixed(3)} without its idle share)`,
  ),
);
console.log(`load average at the end: ${loadAverage()}`);
