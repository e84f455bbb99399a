import { z } from 'zod';
import {
  OAN_EVENTS_DEFAULT_PAGE_LIMIT,
  OAN_EVENTS_MAX_PAGE_LIMIT,
  OAN_EVENTS_MAX_WAIT_SECONDS,
} from '@oan/protocol';

/** Largest value of a Postgres bigint: a `since` past it can match nothing, so the answer is `[]`. */
export const PG_BIGINT_MAX = 9223372036854775807n;

/**
 * `GET /events`: `since` is a decimal bigint string (exclusive); `limit` an integer 1..200.
 * Anything else is a 400 VALIDATION_ERROR, never a silent fallback that would replay history.
 */
export const eventsQuery = z.object({
  since: z
    .string()
    .regex(/^\d+$/, 'since must be a non-negative decimal integer')
    .transform((s) => BigInt(s))
    .default(0n),
  limit: z
    .string()
    .regex(/^\d+$/, `limit must be an integer between 1 and ${OAN_EVENTS_MAX_PAGE_LIMIT}`)
    .transform(Number)
    .pipe(z.number().int().min(1).max(OAN_EVENTS_MAX_PAGE_LIMIT))
    .default(OAN_EVENTS_DEFAULT_PAGE_LIMIT),
  /**
   * Long-poll (a connector extension): seconds (0..30) to hold an empty answer until an envelope arrives. Absent
   * (v1) and 0 answer at once, as before.
   */
  wait: z
    .string()
    .regex(/^\d+$/, `wait must be an integer between 0 and ${OAN_EVENTS_MAX_WAIT_SECONDS}`)
    .transform(Number)
    .pipe(z.number().int().min(0).max(OAN_EVENTS_MAX_WAIT_SECONDS))
    .default(0)
    .describe(
      `Long-poll (an extension): seconds, 0-${OAN_EVENTS_MAX_WAIT_SECONDS}, to hold the answer while nothing is after since; [] when the time is up. An account holds at most a configured number at once (default 8) over every gateway: one more is a 429 RATE_LIMITED`,
    ),
});

export interface UnresolvedSummary {
  pendingQuestions: number;
  goferCount: number;
  decisions: number;
}
