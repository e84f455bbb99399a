import type { WriteSource, WriteTracker } from '@oan/projection';

/** The read-your-writes source name of this event store (topic `matching.events`). */
export const WRITE_SOURCE: WriteSource = 'matching';

/**
 * Read-your-writes for a thread's events (docs/adr/0012). Every event of a thread is keyed by side
 * `a`'s account, and the projector records "applied up to P" per key account
 * (`read.applied_positions`); a caller who is not the key account (side `b`, or a reactor acting for
 * it) gets the key account's position under its own id (`WriteTracker.rememberFor`), which every
 * read of its faces — here and on the gateway's /events routes — waits on.
 */
export class ThreadWrites {
  readonly tracker: WriteTracker;
  constructor(tracker: WriteTracker) {
    this.tracker = tracker;
  }

  /** After a command committed: `position` is its highest appended one, under `keyAccountId`. */
  async remember(keyAccountId: string, position: string, callers: readonly string[]): Promise<void> {
    await this.tracker.rememberFor(callers, keyAccountId, WRITE_SOURCE, position);
  }

  /** For `accountId`'s reads: the key accounts it wrote under (other than itself) and their positions. */
  requiredByKey(accountId: string): Promise<Map<string, bigint>> {
    return this.tracker.requiredByKey(accountId, WRITE_SOURCE);
  }
}
