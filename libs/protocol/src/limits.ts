import { z } from 'zod';

/** `GET /api/v1/limits`: the caller's account's own limits and usage. */
export const limitsResponse = z.object({
  /** Requests per window across every REST route, counted per account; null when the server sets none. */
  rateLimit: z
    .object({
      limit: z.number().int().nonnegative(),
      remaining: z.number().int().nonnegative(),
      used: z.number().int().nonnegative(),
      windowSeconds: z.number().int().nonnegative(),
      /** Seconds until the window ends and `remaining` is `limit` again. */
      resetSeconds: z.number().int().nonnegative(),
    })
    .nullable(),
  longPoll: z.object({ maxWaitSeconds: z.number().int().nonnegative() }),
  idempotency: z.object({
    retentionSeconds: z.number().int().nonnegative(),
    maxKeyLength: z.number().int().nonnegative(),
  }),
});
export type LimitsResponse = z.infer<typeof limitsResponse>;
