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

/** The gofers process: the common variables, the brain's, and object storage's (libs/storage). */
export const gofersEnv = commonEnv
  .extend({
    GOFERS_PORT: envPort(8182),
    /** The brain's provider (src/brain): deterministic and offline, or any OpenAI-compatible endpoint. */
    GOFER_BRAIN: z.enum(['scripted', 'openai']).default('scripted'),
    OPENAI_BASE_URL: optional(httpUrl),
    /** Self-hosted compatible endpoints often take no key. */
    OPENAI_API_KEY: optional(z.string().min(1)),
    OPENAI_MODEL: optional(z.string().min(1)),
    OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
    ...storageEnv.shape,
    /**
     * §0.5: no adapter unless one is asked for (then the upload routes are 404 and attachmentIds a
     * 400). The fleet and docker-compose choose `fs` / `s3` explicitly.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
  })
  .superRefine((env, ctx) => {
    // Refused here rather than when the brain starts: a bad deployment fails before it listens.
    if (env.GOFER_BRAIN === 'openai') {
      for (const key of ['OPENAI_BASE_URL', 'OPENAI_MODEL'] as const) {
        if (!env[key])
          ctx.addIssue({ code: 'custom', path: [key], message: 'required when GOFER_BRAIN=openai' });
      }
    }
    refineStorageEnv(env, ctx);
  });

export type GofersConfig = z.infer<typeof gofersEnv>;

export const loadGofersConfig = (env: NodeJS.ProcessEnv = process.env): GofersConfig =>
  loadConfig(gofersEnv, env);
