import { commonEnv, envPort, llmEnv, loadConfig, refineLlmEnv, z } from '@oan/config';
import { refineStorageEnv, storageEnv } from '@oan/storage';

/** The gofers process: the common variables, the brain's, and object storage's (libs/storage). */
export const gofersEnv = commonEnv
  .extend({
    GOFERS_PORT: envPort(8182),
    /** The brain's provider (src/brain): deterministic and offline, or any OpenAI-compatible endpoint. */
    ...llmEnv.shape,
    ...storageEnv.shape,
    /**
     * §0.5: no adapter unless one is asked for (then the upload routes are 404 and attachmentIds a
     * 400). The fleet and docker-compose choose `fs` / `s3` explicitly.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
  })
  .superRefine((env, ctx) => {
    refineLlmEnv(env, ctx);
    refineStorageEnv(env, ctx);
  });

export type GofersConfig = z.infer<typeof gofersEnv>;

export const loadGofersConfig = (env: NodeJS.ProcessEnv = process.env): GofersConfig =>
  loadConfig(gofersEnv, env);
