import type { FastifyInstance } from 'fastify';
import { GatewayPool } from './gateways.ts';
import { registerProxy } from './proxy.ts';

/** The agent relay's sockets (the relay wire protocol's endpoints, and seed 001's `/announce`, `/lookup`). */
const RELAY_SOCKETS = ['/ws/announce', '/ws/input', '/ws/lookup', '/announce', '/lookup'];
/** The relay's own frame limit (services/agents MAX_FRAME_BYTES, the agents' websockets default of 1 MiB). */
const RELAY_MAX_FRAME_BYTES = 1024 * 1024;
/** Its HTTP lookups: the Python client's path and the TS client's. */
const RELAY_LOOKUPS = ['/api/agents', '/api/relay/agents'];

/**
 * The ConnectOnion agent relay (services/agents, docs/agent-relay.md) behind the public
 * origin. Its replicas share their routing through Redis, so any socket may go to any replica: round
 * robin over those that answer their health probe, a lookup retried on another when one is down.
 */
export async function registerAgentRelay(
  app: FastifyInstance,
  urls: readonly string[],
  connections?: number,
): Promise<void> {
  if (urls.length === 0) return;
  const pool = new GatewayPool(urls);
  const stopProbing = pool.startProbing();
  app.addHook('onClose', async () => stopProbing());
  for (const prefix of RELAY_SOCKETS) {
    await registerProxy(app, {
      prefix,
      upstream: () => pool.next(),
      websocket: true,
      maxFrameBytes: RELAY_MAX_FRAME_BYTES,
    });
  }
  for (const prefix of RELAY_LOOKUPS) {
    await registerProxy(app, {
      prefix,
      upstream: () => pool.next(),
      failover: (failed) => pool.failover(failed),
      ...(connections ? { connections } : {}),
    });
  }
}
