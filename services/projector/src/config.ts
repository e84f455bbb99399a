import { commonEnv, envList, envPort, loadConfig, z } from '@oan/config';

export const projectorEnv = commonEnv.extend({
  PROJECTOR_PORT: envPort(8188),
  /** Domain topics (without TOPIC_PREFIX) the projector consumes. */
  DOMAIN_TOPICS: envList.default([
    'auth.events',
    'gofers.events',
    'matching.events',
    'conversations.events',
    'agents.events',
  ]),
  JWT_SECRET: z.string().optional(),
});
export type ProjectorConfig = z.infer<typeof projectorEnv>;
export const loadProjectorConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(projectorEnv, env);

export const topicNames = (cfg: ProjectorConfig) => ({
  domain: cfg.DOMAIN_TOPICS.map((t) => `${cfg.TOPIC_PREFIX}${t}`),
  oan: `${cfg.TOPIC_PREFIX}oan.events`,
  domainGroup: `${cfg.TOPIC_PREFIX}projector.domain`,
  oanGroup: `${cfg.TOPIC_PREFIX}projector.oan`,
});
