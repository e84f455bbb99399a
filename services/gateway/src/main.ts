import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { buildApp } from './app.ts';
import { openDecisions } from './http/openDecisions.ts';
import { openQuestions } from './http/openQuestions.ts';
import { loadGatewayConfig } from './config.ts';

const config = loadGatewayConfig();
// The gateway only reads the projector's tables (through @oan/projection and @oan/readmodels); the
// projector owns the schema and its migrations.
const orm = await openDatabase({ url: config.DATABASE_URL, schema: 'gateway' });
const redis = new Redis(config.REDIS_URL, { lazyConnect: false });
const app = await buildApp({ config, orm, redis, openItems: [openQuestions, openDecisions] });

closeWithGrace({ delay: 10_000 }, async ({ err }) => {
  if (err) app.log.error({ err }, 'closing after an error');
  await app.close();
  redis.disconnect();
  await orm.close(true);
});

await app.listen({ port: config.GATEWAY_PORT, host: config.HOST });
