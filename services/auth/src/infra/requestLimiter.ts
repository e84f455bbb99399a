import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * A count of requests per key and window: every request counts, and past the limit the answer is
 * the seconds to wait. For `request-code`, whose every call can send a mail to any address: one
 * limiter per client address and one for the whole deployment, so a flood of addresses costs the
 * mailer a bounded number of messages per window.
 */
export class RequestLimiter {
  private readonly limiter: RateLimiterRedis;
  constructor(redis: Redis, keyPrefix: string, points: number, windowSeconds: number) {
    this.limiter = new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration: windowSeconds });
  }

  /** Counts one request; 0 when it is within the limit, else the seconds until the window ends. */
  async take(key: string): Promise<number> {
    try {
      await this.limiter.consume(key);
      return 0;
    } catch (err) {
      if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw err;
    }
  }
}
