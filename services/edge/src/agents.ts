import type { FastifyInstance } from 'fastify';
import { registerProxy } from './proxy.ts';
import { ServiceReplicas } from './upstreams.ts';

/** The agent relay's sockets (the relay wire protocol's endpoints, and seed 001's `/announce`, `/lookup`). */
const RELAY_SOCKETS = ['/ws/announce', '/ws/input', '/ws/lookup', '/announce', '/lookup'];
/** The relay's own frame limit (services/agents MAX_FRAME_BYTES, the agents' websockets default of 1 MiB). */
const RELAY_MAX_FRAME_BYTES = 1024 * 1024;
/** Its HTTP lookups: the Python client's path and the TS client's. */
const RELAY_LOOKUPS = ['/api/agents', '/api/relay/agents'];

/**
 * The ConnectOnion agent relay (services/agents, docs/agent-relay.md) behind the public
 * origin. Its replicas share their routing through Redis, so any socket may go to any replica: round
 * robin over those that answer their health probe; the lookups are spread and retried as every
 * service's requests are (upstreams.ts).
 */
export async function registerAgentRelay(
  app: FastifyInstance,
  urls: readonly string[],
  connections?: number,
): Promise<void> {
  if (urls.length === 0) return;
  const relay = new ServiceReplicas(urls, connections ? { connections } : {});
  const stopProbing = relay.startProbing();
  app.addHook('onClose', async () => {
    stopProbing();
    await relay.close();
  });
  for (const prefix of RELAY_SOCKETS) {
    await registerProxy(app, {
      prefix,
      upstream: () => relay.next(),
      websocket: true,
      maxFrameBytes: RELAY_MAX_FRAME_BYTES,
    });
  }
  for (const prefix of RELAY_LOOKUPS) {
    await registerProxy(app, { prefix, upstream: relay.base, pool: relay.dispatcher() });
  }
}
