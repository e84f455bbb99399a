import { commonEnv, envPort, loadConfig, z } from '@oan/config';

export const gatewayEnv = commonEnv.extend({
  GATEWAY_PORT: envPort(8191),
  /**
   * Prefix of every Engine.IO session id this instance mints (`<id>.<random>`): the edge routes a
   * long-polling request to the gateway that owns its `sid` (docs/architecture.md, edge row).
   */
  GATEWAY_ID: z
    .string()
    .regex(/^[a-z0-9]{1,8}$/, 'must be 1-8 lowercase letters or digits')
    .default('g1'),
  /** Auth service base URL, for `POST /internal/connector-notices` (§10.14). */
  AUTH_URL: z
    .string()
    .url()
    .default('http://127.0.0.1:8181')
    .transform((u) => u.replace(/\/+$/, '')),
});
export type GatewayConfig = z.infer<typeof gatewayEnv>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(gatewayEnv, env);
