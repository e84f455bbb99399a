/**
 * A raw consume of bench/replay.ts in a process of its own, so it starts as cold as `npm run replay`
 * does: one fresh group reading TOPICS from the beginning and dropping the records, timed from the
 * client's connect to the last record. Prints the records per second as its last line.
 *   node bench/rawConsumeProcess.ts stock|ours <brokers,…> <topics,…> <records>
 * `stock`: kafkajs exactly as it ships, a client made here with kafkajs's defaults (without libs/kafka's
 * record decoder of ADR 0053). `ours`: `rawKafkaConsume` (bench/raw.ts), through `createKafka` and
 * `runConsumer` as the replay reads, the same consume bench/replay.ts also times in its own process.
 */
import { Kafka, logLevel } from 'kafkajs';
import { rawKafkaConsume } from './raw.ts';

const [client, brokers, topics, records] = process.argv.slice(2);
const expected = Number(records);

/** kafkajs as it ships: connect, subscribe and run one fresh group until every record came. */
async function stockConsume(): Promise<number> {
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
  return rate;
}

if (client !== 'stock' && client !== 'ours') throw new Error(`client must be stock or ours, not ${client}`);
const rate =
  client === 'stock'
    ? await stockConsume()
    : await rawKafkaConsume(brokers!.split(','), topics!.split(','), expected);
console.log(Math.round(rate));
process.exit(0);
