import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Takes a place when fewer than the cap are held: drops the places whose time is up (a process that
 * died holding one), counts the rest, adds this one with its expiry. One script, so two processes
 * never both take the last place.
 */
const TAKE = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('zadd', KEYS[1], ARGV[3], ARGV[4])
redis.call('pexpireat', KEYS[1], ARGV[3])
return 1`;

/** How long past its wait a place is kept when its process never gives it back (a crash). */
const GRACE_MS = 15_000;

/**
 * Held long-polls of each account, counted in Redis over every replica of every process that holds
 * them: the gateways' `GET /events?wait=N` (`long-polls`) and the runtimes' `claim` with `wait`
 * (`held-claims`). Each holds a connection at the edge, so one account cannot hold them without
 * bound. A place is a member of a sorted set `<prefix><kind>:<account>` scored by its expiry.
 */
export class LongPollSlots {
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  private readonly max: number;
  /** `prefix` is the fleet's REDIS_PREFIX; `kind` names the pool (`long-polls`, `held-claims`). */
  constructor(redis: Redis, prefix: string, kind: string, max: number) {
    this.redis = redis;
    this.keyPrefix = `${prefix}${kind}:`;
    this.max = max;
  }

  /** A place for `waitSeconds`, and its release; null when the account holds `max` already. */
  async take(accountId: string, waitSeconds: number): Promise<(() => Promise<void>) | null> {
    const key = `${this.keyPrefix}${accountId}`;
    const member = randomUUID();
    const now = Date.now();
    const expiry = now + waitSeconds * 1000 + GRACE_MS;
    const taken = await this.redis.eval(TAKE, 1, key, now, this.max, expiry, member);
    if (taken !== 1) return null;
    return async () => {
      await this.redis.zrem(key, member);
    };
  }
}
