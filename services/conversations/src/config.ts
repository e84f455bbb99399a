import { commonEnv, envOptional, envPort, loadConfig, z } from '@oan/config';
import { refineStorageEnv, storageEnv } from '@oan/storage';

/** The conversations process: the common variables, its port, and object storage's (libs/storage). */
export const conversationsEnv = commonEnv
  .extend({
    CONVERSATIONS_PORT: envPort(8185),
    ...storageEnv.shape,
    /**
     * No adapter unless one is asked for (then the attachment routes are 404 and attachmentIds
     * a 400). With `fs` this process stores files in STORAGE_DIR and signs URLs for the listener of
     * the gofers process (same directory, same signing secret); it serves none itself.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
    /**
     * QA only, refused in production: `redis` moves the time of every command by the milliseconds in
     * the Redis key `<REDIS_PREFIX>qa:clock-offset-ms` (src/infra/qaClock.ts), read per command, so
     * tests through the edge can pass the 24-hour revision window without sleeping.
     */
    CONVERSATIONS_QA_CLOCK: envOptional(z.enum(['redis'])),
  })
  .superRefine((env, ctx) => {
    refineStorageEnv(env, ctx);
    // STYLE habit 7: the only behaviour keyed on NODE_ENV is refusing QA-only settings.
    if (env.NODE_ENV === 'production' && env.CONVERSATIONS_QA_CLOCK !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['CONVERSATIONS_QA_CLOCK'],
        message: 'must not be set in production',
      });
    }
  });

export type ConversationsConfig = z.infer<typeof conversationsEnv>;

export const loadConversationsConfig = (env: NodeJS.ProcessEnv = process.env): ConversationsConfig =>
  loadConfig(conversationsEnv, env);
