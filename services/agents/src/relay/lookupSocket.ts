import type WebSocket from 'ws';
import { ADDRESS } from '../domain/announce.ts';
import { errorFrame, LIMITS, NOT_FOUND, type RateLimit } from '../domain/limits.ts';
import { agentJson, type Directory } from './directory.ts';
import { frameText, parseFrame, serially } from './frames.ts';
import type { Hub } from './hub.ts';

/**
 * Seed 001's /lookup socket: GET_AGENT → AGENT_INFO, FIND → AGENTS, rate-limited per requester
 * address (`from`) and per client IP, so neither a spoofed `from` nor many addresses escape the limit.
 */
export function serveLookup(hub: Hub, directory: Directory, ws: WebSocket, ip: string): void {
  const run = serially((err) => hub.logger.warn({ err }, 'lookup frame failed'));
  const allowed = async (kind: string, limit: RateLimit, from: unknown) =>
    (await hub.registry.allow(kind, `ip:${ip}`, limit)) &&
    (typeof from !== 'string' || !ADDRESS.test(from) || (await hub.registry.allow(kind, from, limit)));

  ws.on('message', (data) =>
    run(async () => {
      const msg = parseFrame(frameText(data));
      if (!msg) return ws.send(errorFrame('Invalid JSON: expected an object'));
      const now = Math.floor(Date.now() / 1000);
      if (msg.type === 'GET_AGENT') {
        if (!(await allowed('get', LIMITS.getAgent, msg.from))) {
          return ws.send(errorFrame('Rate limited: at most 100 GET_AGENT per minute', 'GET_AGENT'));
        }
        const a =
          typeof msg.address === 'string' && ADDRESS.test(msg.address)
            ? await directory.get(msg.address)
            : undefined;
        return ws.send(
          JSON.stringify(
            a
              ? { type: 'AGENT_INFO', agent: agentJson(a) }
              : { type: 'AGENT_INFO', agent: null, error: NOT_FOUND },
          ),
        );
      }
      if (msg.type === 'FIND') {
        if (!(await allowed('find', LIMITS.find, msg.from))) {
          return ws.send(errorFrame('Rate limited: at most 10 FIND per minute', 'FIND'));
        }
        const query = typeof msg.query === 'string' ? msg.query.slice(0, 1000) : '';
        const agents = await directory.find(query);
        return ws.send(
          JSON.stringify({ type: 'AGENTS', query, agents: agents.map(agentJson), timestamp: now }),
        );
      }
      ws.send(
        errorFrame('Unknown message type', typeof msg.type === 'string' ? msg.type.slice(0, 64) : undefined),
      );
    }),
  );
  ws.on('error', () => undefined);
}
