import { commonEnv, envList, envPort, loadConfig, z } from '@oan/config';

export const projectorEnv = commonEnv
  .extend({
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
    /**
     * QA only (fault tests), refused in production: every batch of either stage waits this long, and
     * logs that it does, before it is applied (`apply`) or once applied, inside its transaction,
     * before its offset commits (`commit`), so a test can stop or kill a member that holds a batch.
     */
    PROJECTOR_QA_HOLD_MS: z.coerce.number().int().min(0).max(60_000).default(0),
    PROJECTOR_QA_HOLD_AT: z.enum(['apply', 'commit']).default('commit'),
  })
  .superRefine((env, ctx) => {
    // STYLE habit 7: the only behaviour keyed on NODE_ENV is refusing QA-only settings.
    if (env.NODE_ENV === 'production' && env.PROJECTOR_QA_HOLD_MS > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['PROJECTOR_QA_HOLD_MS'],
        message: 'must not be set in production',
      });
    }
  });
export type ProjectorConfig = z.infer<typeof projectorEnv>;
export const loadProjectorConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(projectorEnv, env);

export const topicNames = (cfg: ProjectorConfig) => ({
  domain: cfg.DOMAIN_TOPICS.map((t) => `${cfg.TOPIC_PREFIX}${t}`),
  oan: `${cfg.TOPIC_PREFIX}oan.events`,
  domainGroup: `${cfg.TOPIC_PREFIX}projector.domain`,
  oanGroup: `${cfg.TOPIC_PREFIX}projector.oan`,
});
