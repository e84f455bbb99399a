import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { buildApp } from './app.ts';
import { loadAgentsConfig } from './config.ts';
import { createAgentStore } from './infra/events.ts';

const config = loadAgentsConfig();
const logger = createLogger('agents', config.LOG_LEVEL);
// Schema `agents`: its event store; the directory (read.agents) is the projector's.
const orm = await openDatabase({
  logger,
  url: config.DATABASE_URL,
  schema: 'agents',
  migrations: [createAgentStore().migration()],
});
const redis = new Redis(config.REDIS_URL);
const app = await buildApp({ config, orm, redis, logger });
await app.listen({ host: config.HOST, port: config.AGENTS_PORT });
logger.info({ replica: config.AGENTS_REPLICA_ID }, 'agent relay replica up');

closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await redis.quit();
  await orm.close(true);
});
