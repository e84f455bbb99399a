/**
 * The raw limits the pipeline is compared with, measured in the benchmark's own process with the same
 * client libraries: a kafkajs produce → consume hop on the fleet's broker, and a bare Socket.IO
 * emit → receive on loopback (no adapter, no auth, no Redis).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io } from 'socket.io-client';
import { createKafka, runConsumer, silentLogger } from '@oan/kafka';
import { waitFor } from '@oan/testing';
import { paced, percentiles } from './stats.ts';

export type Percentiles = ReturnType<typeof percentiles>;

/** The key prefix of `sendOne`'s records, so `caughtUp` counts only them. */
const ALONE = 'alone-';

/** A topic of `partitions` partitions and one consumer group, reused across rate steps. */
export async function rawKafkaHop(brokers: string[], prefix: string, partitions = 1) {
  const kafka = createKafka({ brokers, clientId: 'bench-raw', logger: silentLogger });
  const topic = `${prefix}bench.raw`;
  await kafka.ensureTopics([{ topic, numPartitions: partitions }]);
  let sent = new Map<string, number>();
  let lat: number[] = [];
  let received = 0;
  let receivedAlone = 0;
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
        received++;
        if (m.key?.startsWith(ALONE)) receivedAlone++;
      }
      if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
    },
  });
  await consumer.waitForAssignment();
  const producer = await kafka.producer({ idempotent: true });
  let step = 0;
  let sentAlone = 0;
  return {
    /** One record sent alone (acks=-1, no timing): a unit of `bench/floor.ts`'s CPU per record. */
    async sendOne(key: string, value: Buffer): Promise<void> {
      sentAlone++;
      await producer.send({ topic, acks: -1, messages: [{ key: `${ALONE}${key}`, value }] });
    },
    /** Resolves once the group has consumed every record `sendOne` sent (not counting `latency`'s). */
    caughtUp(): Promise<unknown> {
      return waitFor(() => receivedAlone >= sentAlone, {
        timeoutMs: 60_000,
        what: 'raw kafka records sent alone',
      });
    },
    /** Paced single-message sends (acks=-1), as the outbox publisher publishes: produce → consume latency. */
    async latency(rate: number, count: number): Promise<Percentiles> {
      sent = new Map();
      lat = [];
      const tag = `s${step++}-`;
      await paced(count, rate, async (i) => {
        sent.set(tag + i, performance.now());
        await producer.send({ topic, acks: -1, messages: [{ key: tag + i, value: Buffer.from('x') }] });
      });
      await waitFor(() => lat.length >= count, { timeoutMs: 120_000, what: 'raw kafka messages' });
      return percentiles(lat);
    },
    /** Unpaced: `count` messages of `bytes` in batches of `batch`, keys spread over the partitions. */
    async throughput(count: number, batch: number, bytes: number): Promise<number> {
      const start = received;
      const value = Buffer.alloc(bytes, 'x');
      const t0 = performance.now();
      const inflight: Promise<unknown>[] = [];
      for (let i = 0; i < count; i += batch) {
        const messages = Array.from({ length: Math.min(batch, count - i) }, (_, j) => ({
          key: `k${(i + j) % 1000}`,
          value,
        }));
        const sent = producer.send({ topic, acks: -1, messages });
        // Each is awaited in turn below; one failing while an earlier one is awaited must not go unhandled.
        sent.catch(() => undefined);
        inflight.push(sent);
        if (inflight.length >= 8) await inflight.shift();
      }
      await Promise.all(inflight);
      await waitFor(() => received - start >= count, { timeoutMs: 300_000, what: 'raw kafka throughput' });
      return (count * 1000) / (performance.now() - t0);
    },
    async close() {
      await producer.disconnect();
      await consumer.stop();
      await kafka.deleteTopics([topic]);
      await kafka.close();
    },
  };
}

/**
 * The raw limit of a replay: a fresh consumer group reads `topics` from the beginning with the same
 * client (kafkajs behind libs/kafka) and does nothing with the records, timed as replay times itself
 * (from before the group joins until `records` have arrived). Returns records/s.
 */
export async function rawKafkaConsume(brokers: string[], topics: string[], records: number): Promise<number> {
  const kafka = createKafka({ brokers, clientId: 'bench-raw-consume', logger: silentLogger });
  let received = 0;
  const t0 = performance.now();
  const consumer = await runConsumer({
    kafka,
    groupId: `bench-raw-consume-${Date.now().toString(36)}`,
    topics,
    fromBeginning: true,
    eachBatch: async (b) => {
      received += b.messages.length;
      if (b.messages.length) b.resolve(b.messages[b.messages.length - 1]!.offset);
    },
  });
  try {
    await waitFor(() => received >= records, {
      timeoutMs: 300_000,
      intervalMs: 5,
      what: 'raw kafka consume',
    });
    return (records * 1000) / (performance.now() - t0);
  } finally {
    await consumer.stop();
    await kafka.close();
  }
}

/** About the size of an OAN envelope, so the socket hop carries a comparable frame. */
const PAD = 'x'.repeat(512);

/** A bare socket.io server and one websocket client on loopback; the server emits, the client times. */
export async function rawSocketHop() {
  const http = createServer();
  const server = new Server(http);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as AddressInfo).port;
  const client = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], forceNew: true });
  let sent: number[] = [];
  let lat: number[] = [];
  let emittedAlone = 0;
  let receivedAlone = 0;
  client.on('e', (e: { i: number }) => {
    if (e.i < 0) receivedAlone++;
    const t0 = sent[e.i];
    if (t0 !== undefined) lat.push(performance.now() - t0);
  });
  await new Promise<void>((r) => client.once('connect', () => r()));
  return {
    /** One emit with this body, untimed: a unit of `bench/floor.ts`'s CPU per envelope. */
    emitOne(body: unknown): void {
      emittedAlone++;
      server.emit('e', { i: -1, body });
    },
    /** Resolves once the client received every `emitOne`. */
    caughtUp(): Promise<unknown> {
      return waitFor(() => receivedAlone >= emittedAlone, { timeoutMs: 60_000, what: 'raw socket.io emits' });
    },
    async latency(rate: number, count: number): Promise<Percentiles> {
      sent = [];
      lat = [];
      await paced(count, rate, (i) => {
        sent[i] = performance.now();
        server.emit('e', { i, body: PAD });
      });
      await waitFor(() => lat.length >= count, { timeoutMs: 60_000, what: 'raw socket.io emits' });
      return percentiles(lat);
    },
    async close() {
      client.close();
      await server.close();
    },
  };
}
