import type { Redis } from 'ioredis';
import type { MikroORM } from '@oan/db';
import { createHttpApp, trustedProxies, type Logger } from '@oan/http';
import type { AgentsConfig } from './config.ts';
import { agentRoutes } from './http/routes.ts';
import { Bus } from './infra/bus.ts';
import { AgentLog, createAgentStore } from './infra/events.ts';
import { Registry } from './infra/registry.ts';
import { Directory } from './relay/directory.ts';
import { Hub } from './relay/hub.ts';
import { attachRelaySockets } from './relay/server.ts';

export interface AgentsDeps {
  config: AgentsConfig;
  orm: MikroORM;
  redis: Redis;
  logger: Logger;
}

/** One agents replica: the relay sockets, the HTTP lookups, and the routing between replicas. */
export async function buildApp({ config, orm, redis, logger }: AgentsDeps) {
  const trusted = trustedProxies(config.TRUST_PROXY);
  const app = await createHttpApp({
    name: 'agents',
    logLevel: config.LOG_LEVEL,
    // Behind the edge: the client is the hop the trusted edge wrote (GET_AGENT's limit).
    fastify: { trustProxy: trusted },
    readiness: {
      postgres: () => orm.em.fork().getConnection().execute('select 1'),
      redis: () => redis.ping(),
    },
  });
  const registry = new Registry(redis, config.REDIS_PREFIX, config.AGENTS_REPLICA_ID);
  const hub = new Hub(
    registry,
    new Bus(redis, (r) => registry.channel(r), logger),
    new AgentLog(orm, createAgentStore()),
    logger,
    config.AGENT_STALE_MS,
    {
      sockets: config.AGENTS_SOCKETS_PER_MINUTE,
      announces: config.AGENTS_ANNOUNCES_PER_MINUTE,
      clientFrames: config.AGENTS_CLIENT_FRAMES_PER_MINUTE,
    },
  );
  const directory = new Directory(orm, registry);
  await hub.start();
  await app.register(agentRoutes, { directory, registry });
  const detach = attachRelaySockets(app.server, hub, directory, trusted);
  app.addHook('preClose', async () => {
    detach();
    await hub.stop();
  });
  return app;
}
