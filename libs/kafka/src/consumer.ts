import { Gauge } from 'prom-client';
// runConsumer: a consumer-group loop over whole batches with explicit offset commits.
// kafkajs runs with autoCommit: false and eachBatchAutoResolve: false, so nothing is marked
// consumed unless the handler calls `commit(offset)` (or `resolve(offset)`): messages after the
// last resolved offset of a batch are fetched again. `commit` never sends a request of its own: an
// OffsetCommitter sends the latest offset of every partition at most once per interval (and on
// stop), so a group costs a handful of commit requests a second however many messages it handles.
import type { Consumer, ConsumerGroupJoinEvent, KafkaMessage } from 'kafkajs';
import type { KafkaHandle } from './kafka.ts';
import { headersToStrings, keyToString } from './message.ts';

export interface ConsumedMessage {
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  offset: string;
  /** Milliseconds since the epoch. */
  timestamp: string;
}

export interface BatchContext {
  topic: string;
  partition: number;
  highWatermark: string;
  messages: ConsumedMessage[];
  /**
   * `offset` and everything before it on this partition is done: resolve it and commit offset + 1
   * with the next periodic commit (a crash before it redelivers; consumers are idempotent).
   */
  commit(offset: string): Promise<void>;
  /** Like commit, but only moves the in-memory position (for offsets kept elsewhere, e.g. Postgres). */
  resolve(offset: string): void;
  heartbeat(): Promise<void>;
  /** Fetch this partition again from `offset` (this batch becomes stale). */
  seek(offset: string): void;
  /** false once stop() was called: finish early, uncommitted messages come again later. */
  isRunning(): boolean;
  /** true when a rebalance made this batch stale: stop processing it. */
  isStale(): boolean;
}

/** topic -> partitions assigned to this member. */
export type Assignment = Record<string, number[]>;

export interface RunConsumerOptions {
  kafka: KafkaHandle;
  groupId: string;
  topics: string[];
  /** Where a group without committed offsets starts; default false (only new messages). */
  fromBeginning?: boolean;
  eachBatch(batch: BatchContext): Promise<void>;
  readUncommitted?: boolean;
  sessionTimeoutMs?: number;
  /** How often resolved offsets are committed to the group; default COMMIT_INTERVAL_MS. */
  commitIntervalMs?: number;
  /** Batches of different partitions handled at once; default 1. */
  partitionsConsumedConcurrently?: number;
}

export interface RunningConsumer {
  readonly groupId: string;
  /** The underlying kafkajs consumer (for seek/pause/events). */
  readonly consumer: Consumer;
  /** Resolves with the assignment once the first group join completed. */
  waitForAssignment(timeoutMs?: number): Promise<Assignment>;
  /** Stops fetching, waits for the running batch, leaves the group, disconnects. Idempotent. */
  stop(): Promise<void>;
}

const nextOffset = (offset: string): string => (BigInt(offset) + 1n).toString();

/** How long a handled offset may wait before it is committed to its group. */
const COMMIT_INTERVAL_MS = 250;

interface CommitLogger {
  warn(obj: object, msg: string): void;
}

/**
 * The commits of one consumer: `mark` records the last handled offset of a partition, and the
 * latest mark of every partition goes to the group in one request at most every `intervalMs` (and
 * on `flush`). Commits are sent one after the other, so a partition's committed offset never moves
 * back. A failed commit is only logged: the next one carries a later offset, and until then a crash
 * redelivers what the group's consumers turn into nothing (consumers dedup by event id).
 */
class OffsetCommitter {
  private readonly pending = new Map<string, { topic: string; partition: number; offset: string }>();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  private readonly consumer: Pick<Consumer, 'commitOffsets'>;
  private readonly groupId: string;
  private readonly log: CommitLogger;
  private readonly intervalMs;
  constructor(
    consumer: Pick<Consumer, 'commitOffsets'>,
    groupId: string,
    log: CommitLogger,
    intervalMs = COMMIT_INTERVAL_MS,
  ) {
    this.consumer = consumer;
    this.groupId = groupId;
    this.log = log;
    this.intervalMs = intervalMs;
  }

  /** `offset` and everything before it on the partition is handled. */
  mark(topic: string, partition: number, offset: string): void {
    this.pending.set(`${topic}\u0000${partition}`, { topic, partition, offset: nextOffset(offset) });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.intervalMs);
  }

  /** Sends every pending mark now; resolves once it and every earlier commit finished. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const offsets = [...this.pending.values()];
    this.pending.clear();
    if (offsets.length > 0) {
      this.chain = this.chain
        .then(() => this.consumer.commitOffsets(offsets))
        .catch((err: unknown) =>
          this.log.warn(
            { groupId: this.groupId, err: String(err) },
            'offset commit failed; a later one follows',
          ),
        );
    }
    return this.chain;
  }

  /** After a rebalance: the partitions may be another member's now, so their marks are dropped. */
  drop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }
}

export function toConsumedMessage(m: KafkaMessage): ConsumedMessage {
  return {
    key: keyToString(m.key),
    value: m.value,
    headers: headersToStrings(m.headers),
    offset: m.offset,
    timestamp: m.timestamp,
  };
}

/** Records behind the partition's high watermark after each batch, per consumer group (Prometheus). */
const consumerLag = new Gauge({
  name: 'oan_consumer_lag',
  help: 'Records between the last handled offset and the high watermark, per group, topic and partition',
  labelNames: ['group', 'topic', 'partition'],
});

export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topics } = options;
  const log = kafka.logger;
  const consumer = await kafka.consumer({
    groupId,
    ...(options.readUncommitted !== undefined ? { readUncommitted: options.readUncommitted } : {}),
    ...(options.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
  });

  const committer = new OffsetCommitter(consumer, groupId, log, options.commitIntervalMs);
  // Set by stop(): handlers see isRunning() false and no new batch starts, so the last marks can be
  // committed while the consumer is still a member (kafkajs ignores commits once stopped).
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  let assigned: Assignment | undefined;
  let failed: Error | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiters) w();
  };
  const removeJoin = consumer.on(consumer.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => {
    assigned = e.payload.memberAssignment;
    committer.drop();
    log.info({ groupId, memberId: e.payload.memberId, assignment: assigned }, 'kafka consumer joined group');
    wake();
  });
  const removeCrash = consumer.on(consumer.events.CRASH, (e) => {
    log.error(
      { groupId, err: String(e.payload.error), restart: e.payload.restart },
      'kafka consumer crashed',
    );
    if (!e.payload.restart) {
      failed = e.payload.error;
      wake();
    }
  });

  try {
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? false });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 1,
      eachBatch: async (payload) => {
        if (stopping) return;
        const { topic, partition } = payload.batch;
        const last = payload.batch.messages.at(-1)?.offset;
        const running = options.eachBatch({
          topic,
          partition,
          highWatermark: payload.batch.highWatermark,
          messages: payload.batch.messages.map(toConsumedMessage),
          resolve: (offset) => payload.resolveOffset(offset),
          commit: (offset) => {
            payload.resolveOffset(offset);
            committer.mark(topic, partition, offset);
            return Promise.resolve();
          },
          heartbeat: () => payload.heartbeat(),
          seek: (offset) => consumer.seek({ topic, partition, offset }),
          isRunning: () => payload.isRunning() && !stopping,
          isStale: () => payload.isStale(),
        });
        inFlight.add(running);
        try {
          await running;
        } finally {
          inFlight.delete(running);
        }
        // every consumer's lag per partition, after the batch was handled.
        if (last !== undefined) {
          const lag = BigInt(payload.batch.highWatermark) - BigInt(last) - 1n;
          consumerLag.set(
            { group: groupId, topic, partition: String(partition) },
            Number(lag < 0n ? 0n : lag),
          );
        }
      },
    });
  } catch (err) {
    removeJoin();
    removeCrash();
    await consumer.disconnect().catch(() => undefined);
    throw err;
  }

  let stopped: Promise<void> | undefined;
  return {
    groupId,
    consumer,
    waitForAssignment: (timeoutMs = 30_000) =>
      new Promise<Assignment>((resolve, reject) => {
        const check = (): boolean => {
          if (assigned) resolve(assigned);
          else if (failed) reject(failed);
          else return false;
          return true;
        };
        if (check()) return;
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`consumer group '${groupId}' did not join within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = (): void => {
          if (!check()) return;
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        waiters.add(waiter);
      }),
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        await Promise.allSettled([...inFlight]);
        await committer.flush();
        removeJoin();
        removeCrash();
        await consumer.stop();
        await consumer.disconnect();
      })();
      return stopped;
    },
  };
}
