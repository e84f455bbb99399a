import { createKafka, silentLogger } from '@oan/kafka';
import { waitFor, type ProcessName, type TestFleet } from '@oan/testing';
import { logLines } from './replicaTraffic.ts';

/** A counter a projector replica reports on `/metrics` (0 when it has none yet). */
export async function projectorCounter(fleet: TestFleet, name: ProcessName, metric: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${fleet.portOf(name)}/metrics`);
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`${metric} `) || l.startsWith(`${metric}{`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** The partitions of the stage's topics a replica was given when it last joined the stage's group. */
export function assignedTo(fleet: TestFleet, name: ProcessName, stage: 'domain' | 'oan', since = 0): number {
  const joins = logLines(fleet, name).filter(
    (l) =>
      l.msg === 'kafka consumer joined group' &&
      String(l.groupId).endsWith(`projector.${stage}`) &&
      Number(l.time) >= since,
  );
  const last = (joins.at(-1)?.assignment ?? {}) as Record<string, number[]>;
  return Object.values(last).reduce((n, ps) => n + ps.length, 0);
}

export interface HeldBatch {
  stage: 'domain' | 'oan';
  topic: string;
  partition: number;
  first: string;
  last: string;
  time: number;
}

/** The batches a replica held (PROJECTOR_QA_HOLD_MS) since `since`, in order. */
export function heldBatches(fleet: TestFleet, name: ProcessName, since: number): HeldBatch[] {
  return logLines(fleet, name)
    .filter((l) => l.msg === 'qa: holding the batch' && Number(l.time) >= since)
    .map((l) => ({
      stage: l.stage as HeldBatch['stage'],
      topic: String(l.topic),
      partition: Number(l.partition),
      first: String(l.first),
      last: String(l.last),
      time: Number(l.time),
    }));
}

/** Lines of a replica's log with message `msg` since `since`. */
export const loggedSince = (fleet: TestFleet, name: ProcessName, msg: string, since: number) =>
  logLines(fleet, name).filter((l) => l.msg === msg && Number(l.time) >= since);

/** Every record key of a topic with the partitions it was found in, read from the start to its end. */
export async function partitionsByKey(brokers: string, topic: string): Promise<Map<string, Set<number>>> {
  const kafka = createKafka({ brokers: brokers.split(','), clientId: 'test-keys', logger: silentLogger });
  const out = new Map<string, Set<number>>();
  try {
    const admin = await kafka.admin();
    const ends = new Map(
      (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)] as const),
    );
    const reached = new Map<number, bigint>();
    // Named under the topic's prefix: the fleet's clean-up removes the group with its own.
    const consumer = await kafka.consumer({ groupId: `${topic}.keys-check` });
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const key = message.key?.toString('utf8') ?? '';
        out.set(key, (out.get(key) ?? new Set()).add(partition));
        reached.set(partition, BigInt(message.offset) + 1n);
      },
    });
    await waitFor(() => [...ends].every(([p, high]) => (reached.get(p) ?? 0n) >= high), {
      timeoutMs: 60_000,
      what: `${topic} read to its end`,
    });
  } finally {
    await kafka.close();
  }
  return out;
}
