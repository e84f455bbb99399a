import type { Socket } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { createAuthenticator } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import { createHttpApp } from '@oan/http';
import { IDEMPOTENCY_RETENTION_SECONDS } from '@oan/protocol';
import { AccountResolver } from './accounts.ts';
import { registerAgentRelay } from './agents.ts';
import type { EdgeConfig } from './config.ts';
import { GatewayPool } from './gateways.ts';
import { Idempotency, IdempotencyStore } from './idempotency/index.ts';
import { registerLimits } from './limits.ts';
import { registerProxy } from './proxy.ts';
import { ReleasingDispatcher } from './releasing.ts';
import { API_ROUTES, bodyLimitFor, upstreamUrls, type Upstream } from './routes.ts';
import { ServiceReplicas } from './upstreams.ts';
import { registerWeb, webConfigOf } from './web.ts';

const isLongPoll = (url: string) => url.startsWith('/api/v1/events?') && /[?&]wait=/.test(url);

export interface EdgeDeps {
  config: EdgeConfig;
  /** Collect metrics (served by main.ts on their own port); prom-client's default metrics can be registered once per process. */
  metrics?: boolean;
  /**
   * The credential view and Redis, owned by the caller (main.ts closes them after the app): with them
   * the opt-in connector extensions are on (idempotency keys; limits when configured).
   * Without them the edge is the plain v1 proxy (the routing tests).
   */
  extensions?: { orm: MikroORM; redis: Redis };
}

/** How long an idempotency lock outlives an edge that died holding it (renewed while alive). */
const IDEMPOTENCY_LOCK_MS = 30_000;

/** The public origin (docs/architecture.md, edge): health, /api/v1 by owner, /socket.io to gateways. */
export async function buildApp({ config, metrics, extensions }: EdgeDeps) {
  // The factory collapses repeated slashes before routing, so `//api/v1/...` works (clients do not strip a trailing slash from their base URL).
  // Metrics are collected, but never served on the public origin (main.ts: EDGE_METRICS_PORT).
  const app = await createHttpApp({
    name: 'edge',
    logLevel: config.LOG_LEVEL,
    metrics: metrics ?? true,
    metricsRoute: false,
  });
  const gateways = config.GATEWAY_DNS
    ? GatewayPool.discover(config.GATEWAY_DNS)
    : new GatewayPool(config.GATEWAY_URLS, config.GATEWAY_IDS);
  const stopProbing = gateways.startProbing();
  app.addHook('onClose', async () => stopProbing());
  // One set of replicas per service, shared by its routes (several prefixes go to auth).
  const services = new Map<Upstream, ServiceReplicas>();
  const serviceOf = (upstream: Exclude<Upstream, 'GATEWAYS'>): ServiceReplicas | undefined => {
    const urls = upstreamUrls(config, upstream);
    if (!urls) return undefined;
    let service = services.get(upstream);
    if (!service) {
      const created = new ServiceReplicas(urls, { connections: config.EDGE_UPSTREAM_CONNECTIONS });
      const stop = created.startProbing();
      app.addHook('onClose', async () => {
        stop();
        await created.close();
      });
      services.set(upstream, created);
      service = created;
    }
    return service;
  };

  // Reachability probe, no auth, outside /api/v1.
  app.get('/api/health', async () => ({ status: 'ok' }));
  // The web frontend at `/` (its pages hold no credentials; they call /api/v1 like a connector).
  await registerWeb(app, config.WEB_DIR, webConfigOf(config));

  // With the gate (ENABLE_OPEN_API) off no /api/v1 route exists; the factory answers 404.
  if (config.ENABLE_OPEN_API) {
    let idempotency: Idempotency | undefined;
    if (extensions) {
      if (!config.JWT_SECRET) throw new Error('JWT_SECRET is required with ENABLE_OPEN_API');
      const authenticator = createAuthenticator({ orm: extensions.orm, jwtSecret: config.JWT_SECRET });
      const accounts = new AccountResolver(authenticator);
      await registerLimits(app, {
        accounts,
        authenticator,
        redis: extensions.redis,
        redisPrefix: config.REDIS_PREFIX,
        perMinute: config.RATE_LIMIT_PER_MINUTE,
      });
      const store = new IdempotencyStore(extensions.redis, {
        prefix: config.REDIS_PREFIX,
        retentionMs: IDEMPOTENCY_RETENTION_SECONDS * 1000,
        lockMs: IDEMPOTENCY_LOCK_MS,
      });
      const idem = new Idempotency(store, accounts, app.log, IDEMPOTENCY_LOCK_MS);
      idempotency = idem;
      app.addHook('onClose', async () => {
        idem.close();
        await accounts.drain();
      });
    }
    for (const route of API_ROUTES) {
      const bodyLimit = (req: FastifyRequest) =>
        bodyLimitFor(route, req.url, req.headers['content-type'] ?? '');
      if (route.upstream === 'GATEWAYS') {
        await registerProxy(app, {
          prefix: route.prefix,
          upstream: () => gateways.next(),
          failover: (failed) => gateways.failover(failed),
          bodyLimit,
          dispatcher: new ReleasingDispatcher(config.EDGE_GATEWAY_CONNECTIONS),
          ...(idempotency ? { idempotency } : {}),
        });
        continue;
      }
      const service = serviceOf(route.upstream);
      if (service) {
        await registerProxy(app, {
          prefix: route.prefix,
          upstream: service.base,
          pool: service.dispatcher(),
          bodyLimit,
          ...(idempotency ? { idempotency } : {}),
        });
      }
    }
  }

  // The ConnectOnion agent relay, when its replicas are configured.
  await registerAgentRelay(app, config.AGENTS_URLS ?? [], config.EDGE_UPSTREAM_CONNECTIONS);

  // Always proxied: with the gate off the gateways themselves answer "Invalid namespace".
  // Sticky by sid for long-polling and for the upgrade of a polling session (gateways.ts).
  await registerProxy(app, {
    prefix: '/socket.io',
    upstream: (req: FastifyRequest) => gateways.forSession((req.query as { sid?: unknown }).sid),
    websocket: true,
    // The gateways' own limit on a client packet (services/gateway MAX_CLIENT_FRAME_BYTES).
    maxFrameBytes: 16 * 1024,
    // Socket.IO's polling transport holds a request up to its ping interval, as a long-poll does.
    connections: config.EDGE_GATEWAY_CONNECTIONS,
  });

  // A long-poll is held until the gateway has something to send (up to its 25 s ping), and the
  // close packet that would end it needs a new connection, which a closing server refuses. Cut them
  // on shutdown so close does not wait; clients reconnect and backfill, as after any restart.
  // REST requests in flight still finish normally, but for a long-poll of the events (`GET /events?wait=N`), held
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
