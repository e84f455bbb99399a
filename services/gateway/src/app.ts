import type { Redis } from 'ioredis';
import { createAuthenticator, type Authenticator } from '@oan/auth';
import { sql, type MikroORM } from '@oan/db';
import { BODY_LIMITS, createHttpApp, Replicas } from '@oan/http';
import { LongPollSlots, PushTail, WriteTracker } from '@oan/projection';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { GatewayConfig } from './config.ts';
import { eventRoutes } from './http/events.ts';
import { LongPolls } from './http/longPoll.ts';
import type { OpenItemsProvider } from './http/openItems.ts';
import { connectorNoticeClient, type NotifyOutdated } from './infra/connectorNotices.ts';
import { gatewayMetrics } from './infra/metrics.ts';
import { Delivery } from './socket/delivery.ts';
import { RuntimeWakeRelay } from './socket/runtimeWakes.ts';
import { createSocketServer } from './socket/server.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  /** Owned by the caller (main.ts closes it after the app). */
  orm: MikroORM;
  /** Owned by the caller; the app duplicates it for its blocking XREAD connection, which it closes. */
  redis: Redis;
  authenticator?: Authenticator;
  /** Sources of open items for /events/unresolved (the unresolved digest): open questions and decisions. */
  openItems?: readonly OpenItemsProvider[];
  notifyOutdated?: NotifyOutdated;
  sweepMs?: number;
  /** How long a connection may stay without joining a namespace (default HANDSHAKE_TIMEOUT_MS; tests). */
  handshakeTimeoutMs?: number;
  /** Bound of the /events routes' wait for the caller's own writes (default 5 s; tests). */
  ownWritesTimeoutMs?: number;
  /** Expose /metrics; prom-client's default metrics can be registered once per process. */
  metrics?: boolean;
}

/** The gateway's composition root: REST event endpoints, the /oan namespace, the push tail. */
export async function buildApp(deps: GatewayDeps) {
  const { config, orm, redis } = deps;
  const app = await createHttpApp({
    bodyLimit: BODY_LIMITS.gateway,
    name: `gateway-${config.GATEWAY_ID}`,
    logLevel: config.LOG_LEVEL,
    openapi: { title: 'OAN gateway' },
    metrics: deps.metrics ?? true,
    // The edge's GATEWAY_DNS mode learns which replica mints which sid prefix from here.
    health: { gatewayId: config.GATEWAY_ID },
    readiness: {
      postgres: () => sql(orm.em.fork(), 'select 1'),
      redis: () => redis.ping(),
    },
  });
  const authenticator = deps.authenticator ?? createAuthenticator({ orm, jwtSecret: config.JWT_SECRET });

  const metrics = gatewayMetrics();
  const longPolls = new LongPolls(metrics.longPolls);
  // With the gate (ENABLE_OPEN_API) off no OAN route exists (the factory's 404 answers).
  if (config.ENABLE_OPEN_API) {
    const writes = new WriteTracker(redis, config.REDIS_PREFIX);
    const routes = eventRoutes({
      orm,
      authenticator,
      openItems: deps.openItems ?? [],
      writes,
      longPolls,
      longPollSlots: new LongPollSlots(
        redis,
        config.REDIS_PREFIX,
        'long-polls',
        config.GATEWAY_MAX_LONG_POLLS_PER_ACCOUNT,
      ),
      ...(deps.ownWritesTimeoutMs === undefined ? {} : { ownWritesTimeoutMs: deps.ownWritesTimeoutMs }),
    });
    await app.register(routes, {
      prefix: OAN_BASE_PATH,
    });
  }

  const delivery = new Delivery({
    orm,
    metrics,
    log: app.log,
    sweepMs: deps.sweepMs,
    credentialCheckMs: config.GATEWAY_CREDENTIAL_CHECK_MS,
    banGraceMs: config.GATEWAY_BAN_GRACE_MS,
  });
  // The auth replicas, for the connector notices.
  const auth = new Replicas(config.AUTH_URL);
  app.addHook('onClose', () => auth.close());
  const runtimeWakes = new RuntimeWakeRelay(redis.duplicate(), config.REDIS_PREFIX);
  await runtimeWakes.start();
  const io = createSocketServer({
    ...(deps.handshakeTimeoutMs ? { handshakeTimeoutMs: deps.handshakeTimeoutMs } : {}),
    server: app.server,
    gatewayId: config.GATEWAY_ID,
    openApi: config.ENABLE_OPEN_API,
    authenticator,
    delivery,
    runtimeWakes,
    notifyOutdated: deps.notifyOutdated ?? connectorNoticeClient(auth, config.JWT_SECRET, app.log),
    connectorReleases: config.OAN_CONNECTOR_RELEASES,
    log: app.log,
  });
  const tail = new PushTail(
    redis.duplicate(),
    `${config.REDIS_PREFIX}push`,
    (entry) => {
      delivery.onEntry(entry);
      longPolls.onEntry(entry);
    },
    app.log,
  );
  await tail.start();

  // Before the HTTP server closes: open sockets would keep server.close() waiting. Closing the
  // engine is a plain transport close, so clients reconnect elsewhere and backfill.
  app.addHook('preClose', async () => {
    // Held long-polls answer now, so the server's close does not wait out their holds.
    longPolls.close();
    io.engine.close();
    await tail.stop();
    runtimeWakes.stop();
    await delivery.close();
    await authenticator.drain();
  });
  return app;
}
