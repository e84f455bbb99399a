import { commonEnv, envPort, loadConfig, z } from '@oan/config';

/** The matching process: the common variables, its port, and the deployment's pairing mode (§8.6). */
export const matchingEnv = commonEnv.extend({
  MATCHING_PORT: envPort(8184),
  /**
   * `confirm`: both sides must accept (`pair_proposed` carries a `reply` to pair/confirm);
   * `auto`: a proposed thread starts active and its `pair_proposed` has no `reply` (A3).
   */
  PAIRING_MODE: z.enum(['confirm', 'auto']).default('confirm'),
  /** How often discovery re-runs over every ready Gofer (besides reacting to each one becoming ready). */
  DISCOVERY_SWEEP_MS: z.coerce.number().int().min(1000).default(60_000),
});

export type MatchingConfig = z.infer<typeof matchingEnv>;

export const loadMatchingConfig = (env: NodeJS.ProcessEnv = process.env): MatchingConfig =>
  loadConfig(matchingEnv, env);
