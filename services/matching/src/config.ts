import { commonEnv, envPort, idSecret, llmEnv, loadConfig, refineLlmEnv, z } from '@oan/config';
import { refineStorageEnv, storageEnv } from '@oan/storage';

/** The matching process: the common variables, its port, the deployment's pairing mode, storage's. */
export const matchingEnv = commonEnv
  .extend({
    MATCHING_PORT: envPort(8184),
    /** Keys the thread id of a new pair, so two goferIds do not tell anyone their thread's id. */
    ID_SECRET: idSecret,
    /**
     * `confirm`: both sides must accept (`pair_proposed` carries a `reply` to pair/confirm);
     * `auto`: a proposed thread starts active and its `pair_proposed` has no `reply` (so a confirm
     * on it gets the "not waiting for confirmation" 400).
     */
    PAIRING_MODE: z.enum(['confirm', 'auto']).default('confirm'),
    /** How often discovery re-runs over every ready Gofer (besides reacting to each one becoming ready). */
    DISCOVERY_SWEEP_MS: z.coerce.number().int().min(1000).default(60_000),
    /** Pairing-frequency caps per Gofer (domain/discovery.ts): open threads, and proposals per 24 h. */
    PAIRING_MAX_OPEN: z.coerce.number().int().min(1).max(1000).default(3),
    PAIRING_MAX_PER_DAY: z.coerce.number().int().min(1).max(10_000).default(10),
    /**
     * The Gofer-to-Gofer session's provider (src/session): the same variables and rules as the
     * gofers brain — deterministic and offline, or any OpenAI-compatible endpoint.
     */
    ...llmEnv.shape,
    ...storageEnv.shape,
    /**
     * The gofers service's object storage, for signing counterpart-attachment URLs; this
     * process never serves files (the gofers process's listener does). `none` ⇒ that route is 404.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
  })
  .superRefine((env, ctx) => {
    refineLlmEnv(env, ctx);
    refineStorageEnv(env, ctx);
  });

export type MatchingConfig = z.infer<typeof matchingEnv>;

export const loadMatchingConfig = (env: NodeJS.ProcessEnv = process.env): MatchingConfig =>
  loadConfig(matchingEnv, env);
