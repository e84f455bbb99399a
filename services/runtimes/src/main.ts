import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { createLogger, Replicas, subscribeWhenReady } from '@oan/http';
import { BACKGROUND_TAIL_GATHER_MS, parseRuntimeWake, PushTail, runtimeWakesChannel } from '@oan/projection';
import { buildApp, createRuntimesContext } from './app.ts';
import { JobWakes } from './commands/wakes.ts';
import { loadRuntimesConfig } from './config.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import { Endpoints, endpointSettings } from './dispatch/endpoints.ts';
import { ownerNoticeClient } from './infra/ownerNotices.ts';
import { startReplySweep } from './commands/sweep.ts';
import { replyAnswerText } from './http/views.ts';
import { runtimesMigrations } from './infra/tables.ts';
import { Waiters } from './infra/wake.ts';
import { startSweep } from './sweep/takeover.ts';

const config = loadRuntimesConfig();
const logger = createLogger('runtimes', config.LOG_LEVEL);
// Schema `runtimes`: runtimes and their jobs; the envelopes are read from the projector's read.oan_event.
const orm = await openDatabase({
  logger,
  url: config.DATABASE_URL,
  schema: 'runtimes',
  migrations: runtimesMigrations,
});
const redis = new Redis(config.REDIS_URL);
const waiters = new Waiters();
const ctx = createRuntimesContext({ orm, waiters, config });
const wakes = new JobWakes(ctx, redis, config.REDIS_PREFIX, logger);
const endpoints = new Endpoints(endpointSettings(config));
const app = await buildApp({ config, orm, redis, ctx, wakes, endpoints, logger });
// Every replica pushes endpoint jobs: the claim's row locks and leases keep each job with one of them.
const dispatcher = config.RUNTIMES_DISPATCH
  ? new Dispatcher({
      ctx,
      endpoints,
      concurrency: config.RUNTIMES_DISPATCH_CONCURRENCY,
      pollMs: config.RUNTIMES_DISPATCH_POLL_MS,
      log: logger,
    })
  : undefined;

// A stored envelope wakes the account's held claims (the stream the gateways tail); a blocked
// XREAD needs a connection of its own. It gathers its reads (ADR 0051): a wake comes up to 50 ms later.
const tailRedis = new Redis(config.REDIS_URL);
const tail = new PushTail(
  tailRedis,
  `${config.REDIS_PREFIX}push`,
  (entry) => {
    if (entry.t !== 'env') return;
    waiters.wake(entry.a);
    wakes.guard(wakes.onEnvelope(entry.a, entry.s, entry.e));
    dispatcher?.wakeFor(entry.a);
  },
  logger,
  { gatherMs: BACKGROUND_TAIL_GATHER_MS },
);
await tail.start();
// A job given back or a lease run out in another replica wakes the claims held here at once.
const wakeRedis = new Redis(config.REDIS_URL);
wakeRedis.on('message', (_channel: string, message: string) => {
  const wake = parseRuntimeWake(message);
  if (wake) waiters.wake(wake.accountId);
});
await subscribeWhenReady(wakeRedis, runtimeWakesChannel(config.REDIS_PREFIX));
await app.listen({ host: config.HOST, port: config.RUNTIMES_PORT });
// Jobs nobody will handle go to the owner (ADR 0032): auth records the notice with the fleet's internal secret.
const auth = new Replicas(config.AUTH_URL);
const sweep = startSweep(ctx, ownerNoticeClient(auth, config.JWT_SECRET), config.RUNTIMES_SWEEP_MS, logger);
// Replies a previous process recorded but did not finish are carried out now, then periodically.
const replySweep = startReplySweep(ctx, config.RUNTIMES_REPLY_SWEEP_MS, replyAnswerText, logger);

dispatcher?.start();

// Stop accepting requests first, then the sweeps, the tail and the pushes in flight, then close what they used.
closeWithGrace({ delay: 10_000, logger: { error: (m) => logger.error(m) } }, async ({ err, signal }) => {
  if (err) logger.error({ err }, 'closing after an unexpected error');
  else logger.info({ signal }, 'closing');
  await app.close();
  await sweep.stop();
  await replySweep.stop();
  await tail.stop(); // disconnects its own connection
  wakeRedis.disconnect();
  await dispatcher?.stop();
  await endpoints.close();
  await auth.close();
  await ctx.replies?.close();
  await redis.quit();
  await orm.close(true);
});
