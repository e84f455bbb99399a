// The offset commits of one runConsumer member, batched per interval.
import type { Consumer } from 'kafkajs';

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
export class OffsetCommitter {
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
