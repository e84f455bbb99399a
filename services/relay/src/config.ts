import { commonEnv, envList, envPort, loadConfig, z } from '@oan/config';

export const relayEnv = commonEnv.extend({
  RELAY_PORT: envPort(8189),
  /** The service schemas whose outboxes this process publishes; each goes to `<schema>.events`. */
  RELAY_SCHEMAS: envList.default(['auth', 'gofers', 'matching', 'conversations', 'agents']),
  JWT_SECRET: z.string().optional(),
});
export type RelayConfig = z.infer<typeof relayEnv>;
export const loadRelayConfig = () => loadConfig(relayEnv);
