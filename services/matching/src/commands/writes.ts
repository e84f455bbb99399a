import type { Redis } from 'ioredis';
import type { WriteTracker } from '@oan/projection';

/** The read-your-writes source name of this event store (topic `matching.events`). */
export const WRITE_SOURCE = 'matching';

// Keeps the larger of the stored and the given position per field (commands may finish out of order).
const HSET_MAX = `local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (not cur) or (tonumber(ARGV[2]) > tonumber(cur)) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * Read-your-writes for a thread's events (docs/adr/0012). Every event of a thread is keyed by side
 * `a`'s account, and the projector records "applied up to P" per key account
 * (`read.applied_positions`). So:
 * - the key account's position goes to ADR 0009's `WriteTracker` as usual: when side `a` wrote,
 *   its own next read waits exactly as for any other store;
 * - a caller who is not the key account (side `b`, or a reactor acting for it) gets a small map
 *   `key account → highest position` under its own id, which a reader of `b`'s faces waits on
 *   (`requiredByKey`). Remembering the position under `b`'s id in `WriteTracker` would be wrong:
 *   the projector never records `(b, matching)` for events keyed by `a`, so `b` would wait out the
 *   full timeout on every read.
 */
export class ThreadWrites {
  constructor(
    readonly tracker: WriteTracker,
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds = 3600,
  ) {}

  private mapKey(accountId: string): string {
    return `${this.prefix}rw-keys:${WRITE_SOURCE}:${accountId}`;
  }

  /** After a command committed: `position` is its highest appended one, under `keyAccountId`. */
  async remember(keyAccountId: string, position: string, callers: readonly string[]): Promise<void> {
    await this.tracker.remember(keyAccountId, WRITE_SOURCE, position);
    for (const caller of new Set(callers)) {
      if (caller === keyAccountId) continue;
      await this.redis.eval(
        HSET_MAX,
        1,
        this.mapKey(caller),
        keyAccountId,
        position,
        String(this.ttlSeconds),
      );
    }
  }

  /** For `accountId`'s reads: the key accounts it wrote under (other than itself) and their positions. */
  async requiredByKey(accountId: string): Promise<Map<string, bigint>> {
    const entries = await this.redis.hgetall(this.mapKey(accountId));
    return new Map(Object.entries(entries).map(([key, p]) => [key, BigInt(p)]));
  }
}
