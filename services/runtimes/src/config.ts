import { commonEnv, envBool, envHttpUrls, envOptional, envPort, loadConfig, z } from '@oan/config';

const ms = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/**
 * The runtimes process: the common variables, its port, how held claims look again, the takeover
 * sweep, HTTP dispatch and the reply services.
 */
export const runtimesEnv = commonEnv
  .extend({
    RUNTIMES_PORT: envPort(8196),
    /** How often a held claim (`wait`) looks again without being woken: a lease running out, a release elsewhere. */
    RUNTIMES_CLAIM_RECHECK_MS: ms(50, 30_000, 1000),
    /** Claims one account may hold at once (`wait` > 0) over every runtimes process; past it a claim is 429. */
    RUNTIMES_MAX_HELD_CLAIMS: z.coerce.number().int().min(1).max(1000).default(32),
    /** How often leases that ran out are looked for, to wake workers (`runtime_jobs`, held claims elsewhere). */
    RUNTIMES_WAKE_SWEEP_MS: ms(50, 60_000, 1000),
    /** How often the takeover sweep runs (ADR 0032); one replica at a time does the work. */
    RUNTIMES_SWEEP_MS: ms(100, 600_000, 5000),
    /**
     * The auth replicas' base URLs, comma-separated, for `POST /internal/runtime-notices` (the
     * `runtime_job_waiting` notice); spread over them, retried on another only when refused.
     */
    AUTH_URL: envHttpUrls.default(['http://127.0.0.1:8181']),
    // Dispatch to endpoint runtimes (ADR 0033): every runtimes process pushes jobs unless switched off.
    RUNTIMES_DISPATCH: z
      .enum(['on', 'off'])
      .default('on')
      .transform((v) => v === 'on'),
    /** QA only (`npm run dev`, tests): http endpoints and loopback addresses; refused in production. */
    RUNTIMES_ALLOW_LOOPBACK: envBool,
    /** An endpoint must answer a job or a challenge within this (and within the job's lease). */
    RUNTIMES_DISPATCH_TIMEOUT_MS: ms(100, 60_000, 10_000),
    /** Jobs one process has in flight at once, over all endpoints. */
    RUNTIMES_DISPATCH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
    /** How often due jobs are looked for besides the push stream's wake-ups. */
    RUNTIMES_DISPATCH_POLL_MS: ms(20, 60_000, 1000),
    /** A job given back by its endpoint waits from the base, doubling up to the cap (jittered). */
    RUNTIMES_DISPATCH_RETRY_BASE_MS: ms(10, 3_600_000, 1000),
    RUNTIMES_DISPATCH_RETRY_MAX_MS: ms(10, 86_400_000, 60_000),
    /** Consecutive failed pushes after which an endpoint is `unhealthy` (one job at a time), then `disabled`. */
    RUNTIMES_UNHEALTHY_AFTER: z.coerce.number().int().min(1).max(1000).default(3),
    RUNTIMES_DISABLE_AFTER: z.coerce.number().int().min(1).max(10_000).default(10),
    /**
     * The services a `handled` finish's `reply` is carried out through (ADR 0031), called directly;
     * a reply whose service is unset is `501 OUTCOME_NOT_SUPPORTED`.
     */
    GOFERS_URL: envOptional(envHttpUrls),
    MATCHING_URL: envOptional(envHttpUrls),
    CONVERSATIONS_URL: envOptional(envHttpUrls),
    /** How long one reply call to an owning service may take before it counts as not known yet. */
    RUNTIMES_REPLY_TIMEOUT_MS: ms(100, 60_000, 10_000),
    /** How often replies left pending (a crash, a service down) are carried out again; also at start. */
    RUNTIMES_REPLY_SWEEP_MS: ms(100, 600_000, 5_000),
    /**
     * QA only, refused in production: `exit-after-reply` makes the process SIGKILL itself right after
     * an owning service carried out a reply, before it is recorded (test/faults/runtimes.e2e.test.ts).
     */
    RUNTIMES_FAULT: envOptional(z.enum(['exit-after-reply'])),
  })
  .superRefine((env, ctx) => {
    // STYLE habit 7: the only behaviour keyed on NODE_ENV is refusing QA-only settings.
    if (env.NODE_ENV === 'production' && env.RUNTIMES_FAULT !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['RUNTIMES_FAULT'], message: 'must not be set in production' });
    }
    if (env.NODE_ENV === 'production' && env.RUNTIMES_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['RUNTIMES_ALLOW_LOOPBACK'],
        message: 'must not be set in production',
      });
    }
    if (env.RUNTIMES_DISABLE_AFTER < env.RUNTIMES_UNHEALTHY_AFTER) {
      ctx.addIssue({
        code: 'custom',
        path: ['RUNTIMES_DISABLE_AFTER'],
        message: 'must be at least RUNTIMES_UNHEALTHY_AFTER',
      });
    }
  });

export type RuntimesConfig = z.infer<typeof runtimesEnv>;

export const loadRuntimesConfig = (env: NodeJS.ProcessEnv = process.env): RuntimesConfig =>
  loadConfig(runtimesEnv, env);
