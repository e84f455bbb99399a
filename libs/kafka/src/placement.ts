// Where each message of a send lands: its partition, chosen before the send by kafkajs's own
// partitioner, and its offset, read from the broker's answer.
import { Partitioners } from 'kafkajs';
import type { Message, PartitionMetadata, RecordMetadata } from 'kafkajs';

/** A produced message's place in its topic: offsets order the messages of one partition. */
export interface Placement {
  partition: number;
  offset: bigint;
}

/** The partitioner every producer of `createKafka` uses (Java-compatible murmur2 by key). */
export type Partitioner = ReturnType<typeof Partitioners.DefaultPartitioner>;

export const newPartitioner = (): Partitioner => Partitioners.DefaultPartitioner();

/**
 * The messages with their partition set to the one the producer's partitioner would choose from
 * the topic's metadata (a message that names its partition keeps it), so the key → partition
 * mapping is exactly that of a send without partitions.
 */
export function withPartitions(
  partitioner: Partitioner,
  topic: string,
  partitionMetadata: PartitionMetadata[],
  messages: readonly Message[],
): (Message & { partition: number })[] {
  if (partitionMetadata.length === 0) throw new Error(`kafka topic ${topic} has no partitions`);
  return messages.map((message) => ({
    ...message,
    partition: partitioner({ topic, partitionMetadata, message }),
  }));
}

/**
 * Each message's place from the broker's answer: a partition's messages of one send are appended as
 * one batch in the order given, from the partition's `baseOffset`.
 */
export function placementsOf(
  messages: readonly { partition: number }[],
  answer: readonly RecordMetadata[],
): Placement[] {
  const base = new Map<number, bigint>();
  for (const r of answer) {
    if (r.baseOffset === undefined) throw new Error(`no offset for partition ${r.partition} (acks 0?)`);
    base.set(r.partition, BigInt(r.baseOffset));
  }
  const next = new Map<number, bigint>();
  return messages.map(({ partition }) => {
    const offset = next.get(partition) ?? base.get(partition);
    if (offset === undefined) throw new Error(`the broker did not answer for partition ${partition}`);
    next.set(partition, offset + 1n);
    return { partition, offset };
  });
}
