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
import { OffsetCommitter } from './offsetCommitter.ts';

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
  /**
   * Where to start reading partitions the group has no committed offset on, by `topic:partition`,
   * instead of `fromBeginning`'s end: applied to what the first join assigns this member, once.
   */
  startAt?: ReadonlyMap<string, string>;
  /** Passed to the consumer (`ConsumerOptions`): how long, and for how many bytes, a fetch waits. */
  maxWaitTimeMs?: number;
  minBytes?: number;
}

export interface RunningConsumer {
  readonly groupId: string;
  /** The underlying kafkajs consumer (for seek/pause/events); a new one after a replacement. */
  readonly consumer: Consumer;
  /** Resolves with the assignment once the first group join completed. */
  waitForAssignment(timeoutMs?: number): Promise<Assignment>;
  /** Stops fetching, waits for the running batch, leaves the group, disconnects. Idempotent. */
  stop(): Promise<void>;
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

/** The first wait before a consumer kafkajs gave up on is replaced; doubles up to the cap. */
const REJOIN_FIRST_MS = 1000;
const REJOIN_MAX_MS = 30_000;

/** One consumer of the group: kafkajs's, its committer, and how to detach this module's listeners. */
interface Member {
  consumer: Consumer;
  committer: OffsetCommitter;
  detach(): void;
}

export async function runConsumer(options: RunConsumerOptions): Promise<RunningConsumer> {
  const { kafka, groupId, topics } = options;
  const log = kafka.logger;
  // Set by stop(): handlers see isRunning() false and no new batch starts, so the last marks can be
  // committed while the consumer is still a member (kafkajs ignores commits once stopped).
  let stopping = false;
  const inFlight = new Set<Promise<void>>();
  let assigned: Assignment | undefined;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiters) w();
  };
  let member: Member;
  let rejoins = 0;
  let rejoinTimer: NodeJS.Timeout | undefined;
  let startAt = options.startAt;

  /**
   * kafkajs restarts a crashed consumer by itself only when the error is retriable; after any other
   * (a handler's TypeError, a protocol error it does not retry) the consumer stays disconnected and
   * the process would go on consuming nothing. Such a member is replaced by a new one, with backoff.
   */
  const replace = (old: Member): void => {
    if (stopping || member !== old || rejoinTimer) return;
    old.detach();
    old.committer.drop();
    const delayMs = Math.min(REJOIN_MAX_MS, REJOIN_FIRST_MS * 2 ** rejoins++);
    log.warn({ groupId, delayMs }, 'kafka consumer stopped for good; a new member joins the group');
    rejoinTimer = setTimeout(() => {
      rejoinTimer = undefined;
      if (stopping) return;
      void old.consumer.disconnect().catch(() => undefined);
      join().then(
        (m) => {
          if (stopping) void m.consumer.disconnect().catch(() => undefined);
          else member = m;
        },
        (err: unknown) => {
          log.error({ groupId, err: String(err) }, 'kafka consumer could not join again; trying later');
          replace(old);
        },
      );
    }, delayMs);
  };

  const join = async (): Promise<Member> => {
    const consumer = await kafka.consumer({
      groupId,
      ...(options.readUncommitted !== undefined ? { readUncommitted: options.readUncommitted } : {}),
      ...(options.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: options.sessionTimeoutMs } : {}),
      ...(options.maxWaitTimeMs !== undefined ? { maxWaitTimeMs: options.maxWaitTimeMs } : {}),
      ...(options.minBytes !== undefined ? { minBytes: options.minBytes } : {}),
    });
    const committer = new OffsetCommitter(consumer, groupId, log, options.commitIntervalMs);
    const removeJoin = consumer.on(consumer.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => {
      assigned = e.payload.memberAssignment;
      committer.drop();
      // Before the first fetch (kafkajs emits the join before it fetches); a later join, or a
      // replaced member, reads from what the group committed meanwhile.
      for (const [topic, partitions] of Object.entries(startAt ? assigned : {})) {
        for (const partition of partitions) {
          const offset = startAt?.get(`${topic}:${partition}`);
          if (offset !== undefined) consumer.seek({ topic, partition, offset });
        }
      }
      startAt = undefined;
      log.info(
        { groupId, memberId: e.payload.memberId, assignment: assigned },
        'kafka consumer joined group',
      );
      wake();
    });
    const removeCrash = consumer.on(consumer.events.CRASH, (e) => {
      log.error(
        { groupId, err: String(e.payload.error), restart: e.payload.restart },
        'kafka consumer crashed',
      );
      if (!e.payload.restart) replace(self);
    });
    const self: Member = {
      consumer,
      committer,
      detach: () => {
        removeJoin();
        removeCrash();
      },
    };
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
          // A member that handled a batch is healthy: a later replacement starts from the first wait.
          rejoins = 0;
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
      self.detach();
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
    return self;
  };
  // A broker that does not answer yet (a process started while it is away) is waited for.
  member = await kafka.untilBrokerAnswers(`consumer join (${groupId})`, join);

  let stopped: Promise<void> | undefined;
  return {
    groupId,
    get consumer() {
      return member.consumer;
    },
    waitForAssignment: (timeoutMs = 30_000) =>
      new Promise<Assignment>((resolve, reject) => {
        if (assigned) {
          resolve(assigned);
          return;
        }
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`consumer group '${groupId}' did not join within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = (): void => {
          if (!assigned) return;
          resolve(assigned);
          clearTimeout(timer);
          waiters.delete(waiter);
        };
        waiters.add(waiter);
      }),
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        if (rejoinTimer) clearTimeout(rejoinTimer);
        rejoinTimer = undefined;
        await Promise.allSettled([...inFlight]);
        await member.committer.flush();
        member.detach();
        await member.consumer.stop();
        await member.consumer.disconnect();
      })();
      return stopped;
    },
  };
}
