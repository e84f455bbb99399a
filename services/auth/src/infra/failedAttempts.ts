import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * Guessing codes from one client address: every failed email-code verification or
 * pairing-code redemption counts against the address; past the limit the address is refused (429)
 * before any code is looked at, until the window expires. Successful attempts count nothing, so a
 * connector platform joining many users from one server is never slowed. A second limiter keyed by
 * email counts wrong email codes over all codes of that email (a code's own 5 attempts restart with
 * every new code, src/infra/emailCodes.ts); pairing codes carry 64 random bits.
 */
export class FailedAttemptLimiter {
  private readonly limiter: RateLimiterRedis;

  readonly maxFailures: number;
  constructor(redis: Redis, prefix: string, maxFailures: number, windowSeconds: number) {
    this.maxFailures = maxFailures;
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}failed-attempts`,
      points: maxFailures,
      duration: windowSeconds,
    });
  }

  /** Seconds until the address may try again, or 0 when it may try now. */
  async blockedFor(address: string): Promise<number> {
    const res = await this.limiter.get(address);
    return res && res.consumedPoints >= this.maxFailures ? Math.ceil(res.msBeforeNext / 1000) : 0;
  }

  async recordFailure(address: string): Promise<void> {
    await this.limiter.consume(address).catch((err: unknown) => {
      if (!(err instanceof RateLimiterRes)) throw err; // over the limit already: nothing to add
    });
  }
}
