import { commonEnv, envPort, loadConfig, z } from '@oan/config';
import { refineStorageEnv, storageEnv } from '@oan/storage';

/** Unset and empty are the same thing for optional variables (`FOO=` in an env file). */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an absolute http(s) URL')
  .transform((u) => u.replace(/\/+$/, ''));

/** The matching process: the common variables, its port, the deployment's pairing mode (§8.6), storage's. */
export const matchingEnv = commonEnv
  .extend({
    MATCHING_PORT: envPort(8184),
    /**
     * `confirm`: both sides must accept (`pair_proposed` carries a `reply` to pair/confirm);
     * `auto`: a proposed thread starts active and its `pair_proposed` has no `reply` (A3).
     */
    PAIRING_MODE: z.enum(['confirm', 'auto']).default('confirm'),
    /** How often discovery re-runs over every ready Gofer (besides reacting to each one becoming ready). */
    DISCOVERY_SWEEP_MS: z.coerce.number().int().min(1000).default(60_000),
    /**
     * The Gofer-to-Gofer session's provider (src/session): the same variables and rules as the
     * gofers brain — deterministic and offline, or any OpenAI-compatible endpoint.
     */
    GOFER_BRAIN: z.enum(['scripted', 'openai']).default('scripted'),
    OPENAI_BASE_URL: optional(httpUrl),
    /** Self-hosted compatible endpoints often take no key. */
    OPENAI_API_KEY: optional(z.string().min(1)),
    OPENAI_MODEL: optional(z.string().min(1)),
    OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
    ...storageEnv.shape,
    /**
     * The gofers service's object storage, for signing counterpart-attachment URLs (§4.5 (24)); this
     * process never serves files (the gofers process's listener does). `none` ⇒ that route is 404.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
  })
  .superRefine((env, ctx) => {
    // Refused here rather than when the first session starts: a bad deployment fails before it listens.
    if (env.GOFER_BRAIN === 'openai') {
      for (const key of ['OPENAI_BASE_URL', 'OPENAI_MODEL'] as const) {
        if (!env[key])
          ctx.addIssue({ code: 'custom', path: [key], message: 'required when GOFER_BRAIN=openai' });
      }
    }
    refineStorageEnv(env, ctx);
  });

export type MatchingConfig = z.infer<typeof matchingEnv>;

export const loadMatchingConfig = (env: NodeJS.ProcessEnv = process.env): MatchingConfig =>
  loadConfig(matchingEnv, env);
