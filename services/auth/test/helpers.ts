import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { expect } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { REDACT_PATHS } from '@oan/http';
import { buildApp, type AuthAppDeps } from '../src/app.ts';
import { loadAuthConfig, type AuthConfig } from '../src/config.ts';
import { createSmtpMailer, type Mailer } from '../src/infra/mailer.ts';
import { authMigrations, createAuthStore } from '../src/infra/store.ts';
import { body, Mailbox } from '@oan/testing';

export const JWT_SECRET = 'auth-service-test-secret-auth-service-test';
export const ID_SECRET = 'auth-service-id-secret-auth-service-id-secret';
export const QA_EMAIL = 'qa@oan-test.dev';
export const QA_CODE = '424242';

export interface AuthFleet {
  app: Awaited<ReturnType<typeof buildApp>>;
  orm: MikroORM;
  redis: Redis;
  prefix: string;
  smtp: Mailbox;
  config: AuthConfig;
  /** Every log line the app wrote (level trace). */
  logs: string[];
  /** Moves the commands' clock (pairing-code expiry) without sleeping. */
  advanceClock(ms: number): void;
  eventCount(): Promise<number>;
  /** Builds another app on the same database and Redis (e.g. with the gate off). */
  buildAnother(env?: Record<string, string>, deps?: Partial<AuthAppDeps>): ReturnType<typeof buildApp>;
  close(): Promise<void>;
}

const unique = () => randomBytes(6).toString('hex');
export const uniqueEmail = (tag = 'user') => `${tag}-${unique()}@oan-test.dev`;

export async function startAuthFleet(
  env: Record<string, string> = {},
  deps: Partial<AuthAppDeps> = {},
): Promise<AuthFleet> {
  const dbUrl = `postgres://postgres@127.0.0.1:5432/oan_t_${unique()}`;
  const prefix = `oan_t_${unique()}:`;
  const smtp = await Mailbox.start();
  const baseEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'trace',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    ID_SECRET,
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: prefix,
    SMTP_URL: smtp.url,
    OAN_TEST_LOGIN_CODES: `${QA_EMAIL}=${QA_CODE}`,
  };
  const configOf = (extra: Record<string, string>) => loadAuthConfig({ ...baseEnv, ...env, ...extra });
  const config = configOf({});
  const orm = await openDatabase({
    url: dbUrl,
    schema: 'auth',
    migrations: authMigrations(createAuthStore()),
  });
  const redis = new Redis(config.REDIS_URL);
  const mailers: Mailer[] = [];
  const logs: string[] = [];
  let offset = 0;
  const make = (extra: Record<string, string>, more: Partial<AuthAppDeps>) => {
    const cfg = configOf(extra);
    const mailer = createSmtpMailer(cfg.SMTP_URL, cfg.MAIL_FROM);
    mailers.push(mailer);
    const logger = pino(
      { level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
      { write: (l: string) => logs.push(l) },
    );
    return buildApp({
      config: cfg,
      orm,
      redis,
      mailer,
      logger,
      metrics: false,
      now: () => new Date(Date.now() + offset),
      ...deps,
      ...more,
    });
  };
  const app = await make({}, {});
  const others: Awaited<ReturnType<typeof buildApp>>[] = [];
  return {
    app,
    orm,
    redis,
    prefix,
    smtp,
    config,
    logs,
    advanceClock: (ms) => {
      offset += ms;
    },
    eventCount: async () =>
      Number((await sql<{ n: string }>(orm.em.fork(), 'select count(*) as n from auth.events'))[0]!.n),
    buildAnother: async (extra = {}, more = {}) => {
      const other = await make(extra, more);
      others.push(other);
      return other;
    },
    close: async () => {
      await app.close();
      for (const o of others) await o.close();
      for (const m of mailers) m.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await smtp.close();
      await orm.close(true);
      await dropDatabase(dbUrl);
    },
  };
}

export const post = (
  app: AuthFleet['app'],
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
) => app.inject({ method: 'POST', url: `/api/v1${url}`, payload: payload as object, headers });

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Signs in through the email test bypass or a mailed code; returns the verify body. */
export async function signInByEmail(
  fleet: AuthFleet,
  email = uniqueEmail(),
  platform?: unknown,
): Promise<{
  user: { id: string; email: string; sourcePlatform: string; createdAt: string };
  token: string;
}> {
  if (email !== QA_EMAIL) {
    const asked = await post(fleet.app, '/auth/oan/email/request-code', { email });
    expect(asked.statusCode).toBe(200);
  }
  const code = email === QA_EMAIL ? QA_CODE : await fleet.smtp.code(email, fleet.smtp.mailsTo(email));
  const res = await post(fleet.app, '/auth/oan/email/verify', {
    email,
    code,
    ...(platform === undefined ? {} : { platform }),
  });
  expect(res.statusCode).toBe(200);
  return body<Awaited<ReturnType<typeof signInByEmail>>>(res);
}

/**
 * The connector's join chain (request and verify an email code, create and redeem a pairing code): returns
 * the JWT, the user and a fresh API key.
 */
export async function join(fleet: AuthFleet, email = uniqueEmail()) {
  const { user, token } = await signInByEmail(fleet, email);
  const created = await post(fleet.app, '/auth/oan/pairing-codes', undefined, bearer(token));
  expect(created.statusCode).toBe(200);
  const { code } = body<{ code: string }>(created);
  const redeemed = await post(fleet.app, '/auth/oan/pairing-codes/redeem', { code });
  expect(redeemed.statusCode).toBe(200);
  const { apiKey } = body<{ apiKey: string }>(redeemed);
  return { user, token, apiKey, email };
}
