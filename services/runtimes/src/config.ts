import { commonEnv, envPort, loadConfig, z } from '@oan/config';

/** The runtimes process: the common variables, its port, how held claims look again, and the takeover sweep. */
export const runtimesEnv = commonEnv.extend({
  RUNTIMES_PORT: envPort(8196),
  /** How often a held claim (`wait`) looks again without being woken: a lease running out, a release elsewhere. */
  RUNTIMES_CLAIM_RECHECK_MS: z.coerce.number().int().min(50).max(30_000).default(1000),
  /** Claims one account may hold at once (`wait` > 0) over every runtimes process; past it a claim is 429. */
  RUNTIMES_MAX_HELD_CLAIMS: z.coerce.number().int().min(1).max(1000).default(32),
  /** How often leases that ran out are looked for, to wake workers (`runtime_jobs`, held claims elsewhere). */
  RUNTIMES_WAKE_SWEEP_MS: z.coerce.number().int().min(50).max(60_000).default(1000),
  /** How often the takeover sweep runs (ADR 0032); one replica at a time does the work. */
  RUNTIMES_SWEEP_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  /** Auth service base URL, for `POST /internal/runtime-notices` (the `runtime_job_waiting` notice). */
  AUTH_URL: z
    .string()
    .url()
    .default('http://127.0.0.1:8181')
    .transform((u) => u.replace(/\/+$/, '')),
});

export type RuntimesConfig = z.infer<typeof runtimesEnv>;

export const loadRuntimesConfig = (env: NodeJS.ProcessEnv = process.env): RuntimesConfig =>
  loadConfig(runtimesEnv, env);
