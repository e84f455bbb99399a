/**
 * When a failed delivery is tried again: exponential backoff from `baseMs`, capped at
 * `maxMs`, with equal jitter (half fixed, half random) so endpoints that failed together do not all
 * come back together; after `giveUpMs` of uninterrupted failure the endpoint is disabled. The last
 * retry is pulled in to the give-up instant, so a disablement is never later than the period.
 */
export interface RetrySchedule {
  baseMs: number;
  maxMs: number;
  giveUpMs: number;
}

export type AfterFailure = { kind: 'retry'; at: Date } | { kind: 'give-up' };

/** The wait before attempt `failedAttempts + 1`, `failedAttempts` ≥ 1. */
export function retryDelayMs(
  failedAttempts: number,
  s: RetrySchedule,
  random: () => number = Math.random,
): number {
  const full = Math.min(s.maxMs, s.baseMs * 2 ** Math.min(failedAttempts - 1, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

export function afterFailure(
  failedAttempts: number,
  failingSince: Date,
  now: Date,
  s: RetrySchedule,
  random: () => number = Math.random,
): AfterFailure {
  const deadline = failingSince.getTime() + s.giveUpMs;
  if (now.getTime() >= deadline) return { kind: 'give-up' };
  const at = Math.min(deadline, now.getTime() + retryDelayMs(failedAttempts, s, random));
  return { kind: 'retry', at: new Date(at) };
}
