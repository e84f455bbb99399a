import { envBool, z } from '@oan/config';
import type { UrlPolicy } from '@oan/webhooks';

const ms = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** The variables of A2A push notifications, part of the gofers process's (src/config.ts). */
export const a2aPushEnv = z.object({
  /** QA only (`npm run dev`, tests): http push URLs and loopback addresses; refused in production. */
  GOFER_A2A_PUSH_ALLOW_LOOPBACK: envBool,
  /** A receiver must answer 2xx within this. */
  GOFER_A2A_PUSH_TIMEOUT_MS: ms(100, 60_000, 10_000),
  /** A failed notification is tried again after the base, doubling up to the cap (jittered)… */
  GOFER_A2A_PUSH_RETRY_BASE_MS: ms(10, 3_600_000, 2_000),
  GOFER_A2A_PUSH_RETRY_MAX_MS: ms(10, 86_400_000, 300_000),
  /** …and given up after this many attempts, so the task's next notification goes. */
  GOFER_A2A_PUSH_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  /** How often due notifications are looked for, besides the wake-up of this process's own. */
  GOFER_A2A_PUSH_POLL_MS: ms(20, 60_000, 1_000),
  /** Notifications this process has in flight at once. */
  GOFER_A2A_PUSH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
});

export type A2APushEnv = z.infer<typeof a2aPushEnv>;

/** STYLE habit 7: the only behaviour keyed on NODE_ENV is refusing QA-only settings. */
export function refineA2aPushEnv(env: A2APushEnv & { NODE_ENV: string }, ctx: z.RefinementCtx): void {
  if (env.NODE_ENV === 'production' && env.GOFER_A2A_PUSH_ALLOW_LOOPBACK) {
    ctx.addIssue({
      code: 'custom',
      path: ['GOFER_A2A_PUSH_ALLOW_LOOPBACK'],
      message: 'must not be set in production',
    });
  }
}

/** Where push URLs may point, at registration and at every send. */
export const pushUrlPolicy = (env: A2APushEnv): UrlPolicy => ({
  allowLoopback: env.GOFER_A2A_PUSH_ALLOW_LOOPBACK,
});
