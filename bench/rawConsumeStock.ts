/**
 * The raw consume of bench/replay.ts with kafkajs exactly as it ships: its own process, a Kafka client
 * made here with kafkajs's defaults (not `createKafka`, so without libs/kafka's record decoder of
 * ADR 0053), one fresh group reading TOPICS from the beginning and dropping the records as
 * `rawKafkaConsume` (bench/raw.ts) does. Prints the records per second as its last line.
 *   node bench/rawConsumeStock.ts <brokers,…> <topics,…> <records>
 */
import { Kafka, logLevel } from 'kafkajs';

const [brokers, topics, records] = process.argv.slice(2);
const expected = Number(records);
const kafka = new Kafka({
  clientId: 'bench-raw-stock',
  brokers: brokers!.split(','),
  logLevel: logLevel.NOTHING,
});
const consumer = kafka.consumer({
  groupId: `bench-raw-stock-${Date.now().toString(36)}`,
  maxWaitTimeInMs: 500,
});
let received = 0;
let done: () => void = () => undefined;
const all = new Promise<void>((resolve) => (done = resolve));
const t0 = performance.now();
await consumer.connect();
await consumer.subscribe({ topics: topics!.split(','), fromBeginning: true });
await consumer.run({
  autoCommit: false,
  eachBatchAutoResolve: false,
  eachBatch: async (payload) => {
    const { batch } = payload;
    received += batch.messages.length;
    if (batch.messages.length) payload.resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
    if (received >= expected) done();
  },
});
const timeout = setTimeout(() => {
  console.error(`stock raw consume: ${received} of ${expected} records after 300 s`);
  process.exit(1);
}, 300_000);
await all;
const rate = (expected * 1000) / (performance.now() - t0);
clearTimeout(timeout);
await consumer.disconnect();
console.log(Math.round(rate));
