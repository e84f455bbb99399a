import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { buildApp } from './app.ts';
import { loadEdgeConfig } from './config.ts';
import { serveMetrics } from './metrics.ts';

const config = loadEdgeConfig();
// The connector extensions (idempotency keys, visible limits) read the credential view (auth's tables) and keep their records in Redis; the
// edge owns no tables, so its schema holds only the migration bookkeeping.
const extensions = config.ENABLE_OPEN_API
  ? {
      orm: await openDatabase({ url: config.DATABASE_URL, schema: 'edge', poolMax: 4 }),
      redis: new Redis(config.REDIS_URL, { lazyConnect: false }),
    }
  : undefined;
const app = await buildApp({ config, ...(extensions ? { extensions } : {}) });
// Prometheus scrapes the edge here, never on the public origin.
const metrics = config.EDGE_METRICS_PORT
  ? await serveMetrics(config.HOST, config.EDGE_METRICS_PORT)
  : undefined;

closeWithGrace({ delay: 10_000 }, async ({ err }) => {
  if (err) app.log.error({ err }, 'closing after an error');
  await app.close();
  await metrics?.close();
  extensions?.redis.disconnect();
  await extensions?.orm.close(true);
});

await app.listen({ port: config.OAN_PORT, host: config.HOST });
