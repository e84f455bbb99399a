import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

/** An upstream that answers every request after `delayMs`, counting what the edge opened to it. */
function slowUpstream(delayMs: number) {
  const seen = { active: 0, maxActive: 0, sockets: new Set<Socket>(), answered: 0 };
  const server: Server = createServer((req, res) => {
    // The edge's health probe of its gateways is not part of the burst.
    if (req.url?.startsWith('/health')) return void res.writeHead(200).end('{"status":"ok"}');
    seen.sockets.add(req.socket);
    seen.active++;
    seen.maxActive = Math.max(seen.maxActive, seen.active);
    setTimeout(() => {
      seen.active--;
      seen.answered++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    }, delayMs);
  });
  return { server, seen };
}

const gateway = slowUpstream(150);
const matching = slowUpstream(150);
let edge: { app: Awaited<ReturnType<typeof buildApp>>; url: string };
const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  for (const u of [gateway, matching]) await new Promise<void>((r) => u.server.listen(0, '127.0.0.1', r));
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      ENABLE_OPEN_API: 'true',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      GATEWAY_URLS: urlOf(gateway.server),
      MATCHING_URL: urlOf(matching.server),
      EDGE_UPSTREAM_CONNECTIONS: '2',
      EDGE_GATEWAY_CONNECTIONS: '3',
    }),
    metrics: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  edge = { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
});

afterAll(async () => {
  await edge?.app.close();
  for (const u of [gateway, matching]) {
    u.server.closeAllConnections();
    await new Promise((r) => u.server.close(r));
  }
});

describe('a burst of requests beyond the edge’s connections to one upstream', () => {
  it.each([
    ['a service (EDGE_UPSTREAM_CONNECTIONS)', '/api/v1/threads', matching, 2],
    ['a gateway (EDGE_GATEWAY_CONNECTIONS)', '/api/v1/events?since=0', gateway, 3],
  ] as const)(
    'to %s queues on the bounded connections, and every request is answered',
    async (_, path, upstream, bound) => {
      const burst = 12;
      const answers = await Promise.all(
        Array.from({ length: burst }, () =>
          fetch(`${edge.url}${path}`).then(async (r) => [r.status, await r.text()]),
        ),
      );
      expect(answers).toEqual(Array.from({ length: burst }, () => [200, '[]']));
      expect(upstream.seen.answered).toBe(burst);
      expect(upstream.seen.maxActive).toBe(bound);
      expect(upstream.seen.sockets.size).toBeLessThanOrEqual(bound);
    },
  );
});
