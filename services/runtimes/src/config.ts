import { commonEnv, envHttpUrl, envOptional, envPort, loadConfig, z } from '@oan/config';

/** The runtimes process: the common variables, its port, how held claims look again, and the reply services. */
export const runtimesEnv = commonEnv
  .extend({
    RUNTIMES_PORT: envPort(8196),
    /** How often a held claim (`wait`) looks again without being woken: a lease running out, a release elsewhere. */
    RUNTIMES_CLAIM_RECHECK_MS: z.coerce.number().int().min(50).max(30_000).default(1000),
    /** Claims one account may hold at once (`wait` > 0) in one process; past it a claim is 429. */
    RUNTIMES_MAX_HELD_CLAIMS: z.coerce.number().int().min(1).max(1000).default(32),
    /**
     * The services a `handled` finish's `reply` is carried out through (ADR 0031), called directly;
     * a reply whose service is unset is `501 OUTCOME_NOT_SUPPORTED`.
     */
    GOFERS_URL: envOptional(envHttpUrl),
    MATCHING_URL: envOptional(envHttpUrl),
    CONVERSATIONS_URL: envOptional(envHttpUrl),
    /** How long one reply call to an owning service may take before it counts as not known yet. */
    RUNTIMES_REPLY_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    /** How often replies left pending (a crash, a service down) are carried out again; also at start. */
    RUNTIMES_REPLY_SWEEP_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
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
  });

export type RuntimesConfig = z.infer<typeof runtimesEnv>;

export const loadRuntimesConfig = (env: NodeJS.ProcessEnv = process.env): RuntimesConfig =>
  loadConfig(runtimesEnv, env);
