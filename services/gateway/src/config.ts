import { hostname } from 'node:os';
import { commonEnv, envHttpUrls, envPort, loadConfig, z } from '@oan/config';
import { OAN_CONNECTOR_RELEASES } from '@oan/protocol';

/** `{"<package>": "<latest version>", …}`: a JSON object of version strings. */
const releases = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string().min(1), z.string().regex(/^\d+\.\d+\.\d+/, 'must be a version like 1.2.3')));

/** `auto`: the host name with every character outside [A-Za-z0-9_-] dropped (`g1` when none is left). */
export function autoGatewayId(host: string = hostname()): string {
  return host.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 63) || 'g1';
}

export const gatewayEnv = commonEnv.extend({
  GATEWAY_PORT: envPort(8191),
  /**
   * Prefix of every Engine.IO session id this instance mints (`<id>.<random>`): the edge routes a
   * long-polling request to the gateway that owns its `sid` (docs/architecture.md, edge row). `auto`:
   * this host's name (under compose the container id, unique per replica of `--scale gateway=N`),
   * which the replica answers in its /health so an edge with GATEWAY_DNS learns it.
   */
  GATEWAY_ID: z
    .string()
    .regex(/^(auto|[a-z0-9]{1,8})$/, 'must be 1-8 lowercase letters or digits, or auto')
    .default('g1')
    .transform((id) => (id === 'auto' ? autoGatewayId() : id)),
  /**
   * How often every socket's credential is read again from the credential view. A revoked
   * or expired key's sockets are cut within this time even when the revoke's push entry was lost.
   */
  GATEWAY_CREDENTIAL_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
  /**
   * How old a ban must be before the re-check cuts the account's sockets itself: the ban's notice
   * normally arrives first and cuts them after delivering itself; this bounds the wait when it
   * cannot (the projector down, the push stream unavailable). A socket outlives a ban by at most this
   * plus the check interval.
   */
  GATEWAY_BAN_GRACE_MS: z.coerce.number().int().min(0).max(60_000).default(3000),
  /**
   * How many `GET /events?wait=N` one account may have held at once, counted over every gateway
   * (Redis); one more is a 429 RATE_LIMITED. Each held one costs a connection at the edge.
   */
  GATEWAY_MAX_LONG_POLLS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1000).default(8),
  /**
   * The connector release registry: the latest published release per connector package, which `connector_outdated` notices
   * compare a socket's declared connector version with — configuration, so a new release needs no deploy of
   * code: a JSON object `{"@openagentnetwork/dsh-plugin": "0.1.5", …}`. Default: the releases known
   * when this server was built (OAN_CONNECTOR_RELEASES in @oan/protocol).
   */
  OAN_CONNECTOR_RELEASES: releases.default(OAN_CONNECTOR_RELEASES),
  /**
   * The auth replicas' base URLs, comma-separated, for `POST /internal/connector-notices` (the
   * `connector_outdated` notice); spread over them, retried on another only when refused.
   */
  AUTH_URL: envHttpUrls.default(['http://127.0.0.1:8181']),
});
export type GatewayConfig = z.infer<typeof gatewayEnv>;

export const loadGatewayConfig = (env: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(gatewayEnv, env);
