import type { FastifyInstance } from 'fastify';
import { clientKey } from '@oan/http';
import { ADDRESS } from '../domain/announce.ts';
import { LIMITS, NOT_FOUND } from '../domain/limits.ts';
import type { Registry } from '../infra/registry.ts';
import { agentJson, type Directory } from '../relay/directory.ts';

/**
 * The HTTP lookups the clients make: `GET /api/agents/{address}` (Python) and
 * `/api/relay/agents/{address}` (TS). A 404 sends the client through the relay, which is what an
 * agent without public endpoints wants. GET_AGENT's limit, per client IP.
 */
export async function agentRoutes(app: FastifyInstance, deps: { directory: Directory; registry: Registry }) {
  const lookup = async (address: string, ip: string) => {
    if (!(await deps.registry.allow('get', `ip:${ip}`, LIMITS.getAgent))) return { status: 429 as const };
    const agent = ADDRESS.test(address) ? await deps.directory.get(address) : undefined;
    return agent ? { status: 200 as const, body: agentJson(agent) } : { status: 404 as const };
  };
  for (const path of ['/api/agents/:address', '/api/relay/agents/:address']) {
    app.get<{ Params: { address: string } }>(path, async (req, reply) => {
      const r = await lookup(req.params.address.toLowerCase(), clientKey(req.ip));
      if (r.status === 429) {
        return reply
          .code(429)
          .header('retry-after', '60')
          .send({ error: 'Too many requests', code: 'RATE_LIMITED' });
      }
      if (r.status === 404) return reply.code(404).send({ error: NOT_FOUND, code: 'NOT_FOUND' });
      return r.body;
    });
  }
}
