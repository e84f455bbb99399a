import { commonEnv, envPort, loadConfig, z } from '@oan/config';
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
  })
  .superRefine(refineStorageEnv);

export type ConversationsConfig = z.infer<typeof conversationsEnv>;

export const loadConversationsConfig = (env: NodeJS.ProcessEnv = process.env): ConversationsConfig =>
  loadConfig(conversationsEnv, env);
