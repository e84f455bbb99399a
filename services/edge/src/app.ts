import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { createHttpApp } from '@oan/http';
import type { EdgeConfig } from './config';
import { GatewayPool } from './gateways';
import { registerProxy } from './proxy';
import { ReleasingDispatcher } from './releasing';
import { API_ROUTES, bodyLimitFor, upstreamUrl } from './routes';

const isLongPoll = (url: string) => url.startsWith('/api/v1/events?') && /[?&]wait=/.test(url);

export interface EdgeDeps {
  config: EdgeConfig;
  /** Expose /metrics; prom-client's default metrics can be registered once per process. */
  metrics?: boolean;
}

/** The public origin (docs/architecture.md, edge): health, /api/v1 by owner, /socket.io to gateways. */
export async function buildApp({ config, metrics }: EdgeDeps) {
  // The factory collapses repeated slashes before routing, so `//api/v1/...` works (§0.1).
  const app = await createHttpApp({ name: 'edge', logLevel: config.LOG_LEVEL, metrics: metrics ?? true });
  const gateways = new GatewayPool(config.GATEWAY_URLS, config.GATEWAY_IDS);
  const stopProbing = gateways.startProbing();
  app.addHook('onClose', async () => stopProbing());

  // §4.10: reachability probe, no auth, outside /api/v1.
  app.get('/api/health', async () => ({ status: 'ok' }));

  // §0.5 / invariant 8: with the gate off no /api/v1 route exists; the factory answers 404.
  if (config.ENABLE_OPEN_API) {
    for (const route of API_ROUTES) {
      const bodyLimit = (req: FastifyRequest) =>
        bodyLimitFor(route, req.url, req.headers['content-type'] ?? '');
      if (route.upstream === 'GATEWAYS') {
        await registerProxy(app, {
          prefix: route.prefix,
          upstream: () => gateways.next(),
          failover: (failed) => gateways.failover(failed),
          bodyLimit,
          dispatcher: new ReleasingDispatcher(),
        });
        continue;
      }
      const url = upstreamUrl(config, route.upstream);
      if (url) await registerProxy(app, { prefix: route.prefix, upstream: url, bodyLimit });
    }
  }

  // Always proxied: with the gate off the gateways themselves answer "Invalid namespace" (§0.5).
  // Sticky by sid for long-polling and for the upgrade of a polling session (gateways.ts).
  await registerProxy(app, {
    prefix: '/socket.io',
    upstream: (req: FastifyRequest) => gateways.forSession((req.query as { sid?: unknown }).sid),
    websocket: true,
  });

  // A long-poll is held until the gateway has something to send (up to its 25 s ping), and the
  // close packet that would end it needs a new connection, which a closing server refuses. Cut them
  // on shutdown so close does not wait; clients reconnect and backfill (§9.6 "deploy / restart").
  // REST requests in flight still finish normally, but for a long-poll of the events (issue 15), held
  // up to 30 s: cut too, it is retried as any long-poll is.
  const held = new Set<Socket>();
  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/socket.io/') && !isLongPoll(req.url)) return;
    held.add(req.raw.socket);
    reply.raw.once('close', () => held.delete(req.raw.socket));
  });
  app.addHook('preClose', async () => {
    for (const socket of held) socket.destroy();
  });
  return app;
}
