import closeWithGrace from 'close-with-grace';
import { Redis } from 'ioredis';
import { openDatabase } from '@oan/db';
import { buildApp } from './app.ts';
import { loadAuthConfig } from './config.ts';
import { createSmtpMailer } from './infra/mailer.ts';
import { authMigrations, createAuthStore } from './infra/store.ts';
import { startWebhookDelivery } from './webhooks/index.ts';

const config = loadAuthConfig();
const orm = await openDatabase({
  url: config.DATABASE_URL,
  schema: 'auth',
  migrations: authMigrations(createAuthStore()),
});
const redis = new Redis(config.REDIS_URL);
const mailer = createSmtpMailer(config.SMTP_URL, config.MAIL_FROM);
const app = await buildApp({ config, orm, redis, mailer });
const store = createAuthStore();
const stopDelivery =
  config.ENABLE_OPEN_API && config.WEBHOOK_DELIVERY
    ? await startWebhookDelivery(config, { orm, store, now: () => new Date() }, redis, app.log)
    : async () => undefined;

// Stop accepting requests first, then close what they used, in reverse order of creation.
closeWithGrace({ delay: 10_000, logger: { error: (m) => app.log.error(m) } }, async ({ err, signal }) => {
  if (err) app.log.error({ err }, 'closing after an unexpected error');
  else app.log.info({ signal }, 'closing');
  await app.close();
  await stopDelivery();
  mailer.close();
  await redis.quit();
  await orm.close(true);
});

await app.listen({ host: config.HOST, port: config.AUTH_PORT });
