/**
 * Append → socket latency of the whole pipeline (event store → relay → Kafka → projector → Redis →
 * gateway → socket.io client), next to the raw Kafka produce → consume latency measured with the same
 * client on the same broker, in one run. Usage:
 *   npx tsx bench/pipeline-latency.ts [rate=100] [seconds=10]
 * Prints percentiles and the ratio of the pipeline to the raw Kafka hop.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { createKafka, runConsumer, silentLogger } from '@oan/log';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, openSocket, TestFleet, waitFor } from '@oan/testing';
import { fmt, paced, percentiles } from './stats';

const rate = Number(process.argv[2] ?? 100);
const seconds = Number(process.argv[3] ?? 10);
const count = rate * seconds;

async function rawKafka(brokers: string[], prefix: string) {
  const kafka = createKafka({ brokers, clientId: 'bench-raw', logger: silentLogger });
  const topic = `${prefix}bench.raw`;
  await kafka.ensureTopics([{ topic, numPartitions: 1 }]);
  const sent = new Map<string, number>();
  const lat: number[] = [];
  const consumer = await runConsumer({
    kafka,
    groupId: `${prefix}bench.raw`,
    topics: [topic],
    fromBeginning: true,
    eachBatch: async (b) => {
      const now = performance.now();
      for (const m of b.messages) {
        const t0 = sent.get(m.key ?? '');
        if (t0 !== undefined) lat.push(now - t0);
      }
      if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
    },
  });
  await consumer.waitForAssignment();
  const producer = await kafka.producer({ idempotent: true });
  await paced(count, rate, async (i) => {
    sent.set(String(i), performance.now());
    await producer.send({ topic, acks: -1, messages: [{ key: String(i), value: Buffer.from('x') }] });
  });
  await waitFor(() => lat.length >= count, { timeoutMs: 60_000, what: 'raw kafka messages' });
  await consumer.stop();
  await kafka.deleteTopics([topic]);
  await kafka.close();
  return percentiles(lat);
}

async function pipeline(fleet: TestFleet) {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `bench-${fleet.id}@example.com`);
  const socket = await openSocket(fleet.url, acc.apiKey);
  const sent = new Map<string, number>();
  const lat: number[] = [];
  socket.on('oan:event', (e: OanEventEnvelope) => {
    const t0 = sent.get(String(e.payload.installed));
    if (t0 !== undefined) lat.push(performance.now() - t0);
  });
  const store = new EventStore('auth');
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  await paced(count, rate, async (i) => {
    const installed = `0.0.${i}`;
    sent.set(installed, performance.now());
    await orm.em.fork().transactional((em) =>
      store.append(em, [
        {
          streamId: `bench-${randomUUID()}`,
          expectedVersion: 'no_stream',
          events: [
            {
              type: 'ConnectorOutdatedNoticed',
              accountId: acc.userId,
              occurredAt: new Date().toISOString(),
              data: {
                accountId: acc.userId,
                connector: 'bench',
                installed,
                latest: '9.9.9',
                noticedAt: new Date().toISOString(),
              },
            },
          ],
        },
      ]),
    );
  });
  await waitFor(() => lat.length >= count, { timeoutMs: 120_000, what: 'pipeline envelopes' });
  socket.close();
  await orm.close();
  return percentiles(lat);
}

const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
try {
  const raw = await rawKafka(fleet.env.KAFKA_BROKERS!.split(','), fleet.env.TOPIC_PREFIX!);
  const pipe = await pipeline(fleet);
  console.log(`rate ${rate}/s for ${seconds} s (${count} events), one account, one websocket client`);
  console.log(
    `raw kafka produce→consume (kafkajs, acks=-1): p50 ${fmt(raw.p50)}  p95 ${fmt(raw.p95)}  p99 ${fmt(raw.p99)}  max ${fmt(raw.max)}`,
  );
  console.log(
    `pipeline append→socket:                    p50 ${fmt(pipe.p50)}  p95 ${fmt(pipe.p95)}  p99 ${fmt(pipe.p99)}  max ${fmt(pipe.max)}`,
  );
  console.log(
    `ratio pipeline/raw: p50 ${(pipe.p50 / raw.p50).toFixed(1)}x  p99 ${(pipe.p99 / raw.p99).toFixed(1)}x`,
  );
} finally {
  await fleet.stop();
}
