// Sender: the idempotent producer the projector and the outbox publishers send on.
import type { Admin, PartitionMetadata, Producer, ProducerRecord, RecordMetadata } from 'kafkajs';
import type { LogSink } from './logger.ts';
import { newPartitioner, placementsOf, withPartitions, type Placement } from './placement.ts';

/**
 * An idempotent producer for `send` only, which survives what leaves a kafkajs idempotent producer
 * unusable for good: after a broker lost or rejected its sequence state (a broker killed -9 and
 * restarted answers OUT_OF_ORDER_SEQUENCE_NUMBER to every later request of the old producer id), the
 * failed send is thrown as usual, and the next one goes out on a new producer (a new producer id,
 * sequences from zero). The caller retries the batch it lost; consumers deduplicate by event id.
 */
export interface Sender {
  send(record: ProducerRecord): Promise<RecordMetadata[]>;
  /**
   * `send`, answering each message's partition and offset, in the order given. Partitions are chosen
   * before the send by the producer's own partitioner, so a key lands where `send` would put it.
   */
  sendPlaced(record: ProducerRecord): Promise<Placement[]>;
}

/** How long a topic's partition list is trusted (kafkajs's own metadataMaxAge). */
const PARTITIONS_MAX_AGE_MS = 300_000;

/** Broker answers after which an idempotent producer's id can never send again (KIP-360). */
const FATAL_FOR_PRODUCER_ID = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
]);

/** Whether `err` (or what it wraps) is one of those answers. */
export function needsNewProducer(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && FATAL_FOR_PRODUCER_ID.has(type)) return true;
    e = (e as { cause?: unknown; originalError?: unknown }).originalError ?? (e as { cause?: unknown }).cause;
  }
  return false;
}

export interface SenderDeps {
  /** A new connected idempotent producer, tracked by the handle. */
  producer(): Promise<Producer>;
  /** Stops tracking a producer the sender gave up. */
  forget(p: Producer): void;
  admin(): Promise<Admin>;
  logger: LogSink;
}

export async function openSender(d: SenderDeps): Promise<Sender> {
  let current: Producer | undefined;
  let pending: Promise<Producer> | undefined;
  // The producer to send on: the current one, or a new one (made once however many sends wait).
  const get = (): Promise<Producer> => {
    if (current) return Promise.resolve(current);
    pending ??= d
      .producer()
      .then((p) => (current = p))
      .finally(() => (pending = undefined));
    return pending;
  };
  await get();
  const send = async (record: ProducerRecord): Promise<RecordMetadata[]> => {
    const p = await get();
    try {
      return await p.send(record);
    } catch (err) {
      if (needsNewProducer(err) && current === p) {
        d.logger.warn(
          { err: (err as Error).message },
          'kafka producer id unusable; the next send uses a new one',
        );
        current = undefined;
        d.forget(p);
        void p.disconnect().catch(() => undefined);
      }
      throw err;
    }
  };
  const partitioner = newPartitioner();
  const known = new Map<string, { at: number; partitions: PartitionMetadata[] }>();
  const partitionsOf = async (topic: string): Promise<PartitionMetadata[]> => {
    const hit = known.get(topic);
    if (hit && Date.now() - hit.at < PARTITIONS_MAX_AGE_MS) return hit.partitions;
    const { topics } = await (await d.admin()).fetchTopicMetadata({ topics: [topic] });
    const partitions = topics[0]?.partitions ?? [];
    known.set(topic, { at: Date.now(), partitions });
    return partitions;
  };
  return {
    send,
    sendPlaced: async (record) => {
      const messages = withPartitions(
        partitioner,
        record.topic,
        await partitionsOf(record.topic),
        record.messages,
      );
      return placementsOf(messages, await send({ ...record, messages }));
    },
  };
}
