import type { Redis } from 'ioredis';

/**
 * QA only (`CONVERSATIONS_QA_CLOCK=redis`, refused in production): the milliseconds every command's
 * time is moved by, read per command from this Redis key, so an end-to-end test can move the clock
 * past the 24-hour revision window without sleeping. Unset or not a number: 0.
 */
export const QA_CLOCK_OFFSET_KEY = 'qa:clock-offset-ms';

export function redisClockOffset(redis: Redis, prefix: string): () => Promise<number> {
  return async () => {
    const offset = Number(await redis.get(`${prefix}${QA_CLOCK_OFFSET_KEY}`));
    return Number.isSafeInteger(offset) ? offset : 0;
  };
}

/** The real clock: nothing added, no I/O. */
export const noClockOffset = (): Promise<number> => Promise.resolve(0);
