import pRetry from 'p-retry';
import type { LogSink } from './logger.ts';

/** How `retrying` waits and what it tries again. */
export interface RetryPolicy {
  /**
   * No attempt starts once this much time has passed since the first: the last error is thrown.
   * `Infinity`: no such bound (`retry` alone decides).
   */
  withinMs: number;
  /** The pause after attempt n (from 0) is 100 ms × 2ⁿ, at most this. */
  maxPauseMs: number;
  /** Whether an error is worth another attempt (default: every error is). */
  retry?: (err: unknown) => boolean;
  /** Told of each error that is tried again, before the pause. */
  onRetry?: (err: unknown, attempt: number) => void;
}

/**
 * An error p-retry is to treat as any other: it never tries a `TypeError` again, and kafkajs throws
 * some while a broker comes and goes, which the policy decides on as on the rest.
 */
class Carried extends Error {
  readonly original: unknown;
  constructor(original: unknown) {
    super(String(original));
    this.original = original;
  }
}
const uncarried = (err: unknown): unknown => (err instanceof Carried ? err.original : err);

/**
 * Runs `run` until it resolves (p-retry underneath). The admin calls a process makes at start-up meet
 * a broker that may have just started (no controller, leaders still being elected, a group
 * coordinator still loading), and fleet processes doing the same thing side by side: those errors
 * pass within seconds.
 */
export async function retrying<T>(run: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  try {
    return await pRetry(
      async () => {
        try {
          return await run();
        } catch (err) {
          throw err instanceof Error && !(err instanceof TypeError) ? err : new Carried(err);
        }
      },
      {
        retries: Infinity,
        minTimeout: 100,
        factor: 2,
        maxTimeout: policy.maxPauseMs,
        maxRetryTime: policy.withinMs,
        shouldRetry: ({ error, attemptNumber }) => {
          const err = uncarried(error);
          if (!(policy.retry?.(err) ?? true)) return false;
          policy.onRetry?.(err, attemptNumber - 1);
          return true;
        },
      },
    );
  } catch (err) {
    throw uncarried(err);
  }
}

/**
 * Whether a Kafka client error says the broker did not answer: a connection refused, reset or timed
 * out, a coordinator still loading, a leader not elected yet. kafkajs marks those retriable, and once
 * its own few retries are spent it throws them wrapped in a non-retriable error, so each cause counts.
 */
export function brokerAway(err: unknown): boolean {
  let e = err;
  for (let depth = 0; e && depth < 8; depth++) {
    if ((e as { retriable?: unknown }).retriable === true) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `call` until it resolves for as long as it fails because the broker does not answer
 * (`brokerAway`), pausing 100 ms doubling up to 5 s with a warning each time; any other error, or
 * `stopped()` turning true, ends the wait with that error (`KafkaHandle.untilBrokerAnswers`).
 */
export function waitForBroker<T>(
  call: () => Promise<T>,
  d: { what: string; logger: LogSink; stopped: () => boolean },
): Promise<T> {
  return retrying(call, {
    withinMs: Infinity,
    maxPauseMs: 5_000,
    retry: (err) => !d.stopped() && brokerAway(err),
    onRetry: (err, attempt) =>
      d.logger.warn(
        { err: String(err), attempt, what: d.what },
        'kafka broker does not answer yet; waiting for it',
      ),
  });
}
