import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { buildApp, createMatchingContext } from './app';
import { loadMatchingConfig } from './config';
import { createMatchingStore, matchingMigrations } from './infra/store';

const config = loadMatchingConfig();
const logger = createLogger('matching', config.LOG_LEVEL);
const store = createMatchingStore();
// Schema `matching`: the event store and the inline lookups; the read.* tables are the projector's.
const orm = await openDatabase({
  url: config.DATABASE_URL,
  schema: 'matching',
  migrations: matchingMigrations(store),
});
const redis = new Redis(config.REDIS_URL);
const ctx = createMatchingContext({ config, orm, redis, store });
const app = await buildApp({ config, orm, redis, ctx, logger });

// Stop accepting requests first, then close what they used, in reverse order.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await redis.quit();
  await orm.close(true);
});

await app.listen({ host: config.HOST, port: config.MATCHING_PORT });
