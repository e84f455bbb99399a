import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Takes a place when fewer than the cap are held: drops the places whose time is up (a gateway that
 * died holding one), counts the rest, adds this one with its expiry. One script, so two gateways
 * never both take the last place.
 */
const TAKE = `
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('zadd', KEYS[1], ARGV[3], ARGV[4])
redis.call('pexpireat', KEYS[1], ARGV[3])
return 1`;

/** How long past its wait a place is kept when its gateway never gives it back (a crash). */
const GRACE_MS = 15_000;

/**
 * The held long-polls (`GET /events?wait=N`) of each account, counted in Redis over every gateway:
 * each holds a connection at the edge and a subscription here, so one account cannot hold them
 * without bound. A place is a member of a sorted set scored by its expiry.
 */
export class LongPollSlots {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly max: number;
  constructor(redis: Redis, prefix: string, max: number) {
    this.redis = redis;
    this.prefix = prefix;
    this.max = max;
  }

  /** A place for `waitSeconds`, and its release; null when the account holds `max` already. */
  async take(accountId: string, waitSeconds: number): Promise<(() => Promise<void>) | null> {
    const key = `${this.prefix}long-polls:${accountId}`;
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
