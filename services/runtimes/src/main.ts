import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { PushTail } from '@oan/projection';
import { buildApp, createRuntimesContext } from './app.ts';
import { loadRuntimesConfig } from './config.ts';
import { startReplySweep } from './commands/sweep.ts';
import { replyAnswerText } from './http/views.ts';
import { runtimesMigrations } from './infra/tables.ts';
import { Waiters } from './infra/wake.ts';

const config = loadRuntimesConfig();
const logger = createLogger('runtimes', config.LOG_LEVEL);
// Schema `runtimes`: runtimes and their jobs; the envelopes are read from the projector's read.oan_event.
const orm = await openDatabase({
  url: config.DATABASE_URL,
  schema: 'runtimes',
  migrations: runtimesMigrations,
});
const redis = new Redis(config.REDIS_URL);
const waiters = new Waiters();
const ctx = createRuntimesContext({ orm, waiters, config });
const app = await buildApp({ config, orm, redis, ctx, logger });

// A stored envelope wakes the account's held claims (the stream the gateways tail); a blocked
// XREAD needs a connection of its own.
const tailRedis = new Redis(config.REDIS_URL);
const tail = new PushTail(
  tailRedis,
  `${config.REDIS_PREFIX}push`,
  (entry) => {
    if (entry.t === 'env') waiters.wake(entry.a);
  },
  logger,
);
await tail.start();
await app.listen({ host: config.HOST, port: config.RUNTIMES_PORT });
// Replies a previous process recorded but did not finish are carried out now, then periodically.
const sweep = startReplySweep(ctx, config.RUNTIMES_REPLY_SWEEP_MS, replyAnswerText, logger);

// Stop accepting requests first, then the tail, then close what they used.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await sweep.stop();
  await tail.stop(); // disconnects its own connection
  await redis.quit();
  await orm.close(true);
});
