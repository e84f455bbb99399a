import { commonEnv, envList, envPort, loadConfig, z } from '@oan/config';

export const outboxEnv = commonEnv.extend({
  OUTBOX_PORT: envPort(8189),
  /** The service schemas whose outboxes this process publishes; each goes to `<schema>.events`. */
  OUTBOX_SCHEMAS: envList.default(['auth', 'gofers', 'matching', 'conversations', 'agents']),
  JWT_SECRET: z.string().optional(),
});
export type OutboxConfig = z.infer<typeof outboxEnv>;
export const loadOutboxConfig = () => loadConfig(outboxEnv);
