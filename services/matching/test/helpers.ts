import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { ensureInfra, insertAccount, insertApiKey } from '@oan/testing';
import { buildApp, createMatchingContext, type MatchingAppDeps } from '../src/app';
import { runThreadCommand, type MatchingContext } from '../src/commands/context';
import { loadMatchingConfig, type MatchingConfig } from '../src/config';
import { threadStreamId, type PairingMode, type ThreadEvent, type ThreadSide } from '../src/domain/events';
import { threadIdFor } from '../src/domain/ids';
import { createMatchingStore, matchingMigrations } from '../src/infra/store';

export const JWT_SECRET = 'matching-service-test-secret-matching';

type App = Awaited<ReturnType<typeof buildApp>>;

export interface Caller {
  accountId: string;
  headers: Record<string, string>;
}
export interface Side extends Caller {
  goferId: string;
  name: string;
}

export interface MatchingFleet {
  app: App;
  orm: MikroORM;
  authOrm: MikroORM;
  redis: Redis;
  ctx: MatchingContext;
  config: MatchingConfig;
  /** An account of the credential view with an API key (all permissions unless given). */
  account(opts?: { realm?: string; permissions?: readonly string[] }): Promise<Caller>;
  /**
   * A thread proposed between two fresh accounts' Gofers by running the domain's ProposePairing
   * (as the discovery reactor will), so the inline lookups are written as in production.
   */
  pair(mode?: PairingMode): Promise<{ threadId: string; a: Side; b: Side }>;
  /** The thread's stream, as stored. */
  events(threadId: string): Promise<ThreadEvent[]>;
  /** Every event of the matching store (for "nothing was appended"). */
  eventCount(): Promise<number>;
  buildAnother(env?: Record<string, string>, deps?: Partial<MatchingAppDeps>): Promise<App>;
  close(): Promise<void>;
}

/**
 * The matching app against real Postgres and Redis (unique database and Redis prefix, removed by
 * `close`). Its routes read the thread streams and the inline lookups only, so no relay or projector
 * runs here.
 */
export async function startMatchingFleet(env: Record<string, string> = {}): Promise<MatchingFleet> {
  ensureInfra();
  const id = randomBytes(5).toString('hex');
  const baseEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_t_${id}`,
    REDIS_PREFIX: `oan_t_${id}:`,
    TOPIC_PREFIX: `t${id}.`,
  };
  const configOf = (extra: Record<string, string>) => loadMatchingConfig({ ...baseEnv, ...env, ...extra });
  const config = configOf({});
  const authOrm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'auth',
    migrations: [credentialsMigration],
  });
  const store = createMatchingStore();
  const orm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'matching',
    migrations: matchingMigrations(store),
  });
  const redis = new Redis(config.REDIS_URL);
  const ctx = createMatchingContext({ config, orm, redis, store });
  const app = await buildApp({ config, orm, redis, ctx, metrics: false });
  const others: App[] = [];

  const account: MatchingFleet['account'] = async (opts = {}) => {
    const accountId = await insertAccount(authOrm, opts.realm ? { realm: opts.realm } : {});
    const { key } = await insertApiKey(
      authOrm,
      accountId,
      opts.permissions ? { permissions: opts.permissions } : {},
    );
    return { accountId, headers: { authorization: `Bearer ${key}` } };
  };

  return {
    app,
    orm,
    authOrm,
    redis,
    ctx,
    config,
    account,
    async pair(mode = 'confirm') {
      const [x, y] = await Promise.all([account(), account()]);
      const sideOf = (c: Caller, name: string): Side => ({ ...c, goferId: randomUUID(), name });
      const [s1, s2] = [sideOf(x, 'Acme Hiring'), sideOf(y, 'Lin')];
      const [a, b] = s1.goferId < s2.goferId ? [s1, s2] : [s2, s1];
      const snapshot = (s: Side): ThreadSide => ({
        goferId: s.goferId,
        accountId: s.accountId,
        name: s.name,
        sourcePlatform: 'dsh',
      });
      const threadId = threadIdFor(a.goferId, b.goferId);
      await runThreadCommand(
        ctx,
        threadId,
        { type: 'ProposePairing', data: { mode, sides: [snapshot(b), snapshot(a)], score: 0.6 } },
        [a.accountId, b.accountId],
      );
      return { threadId, a, b };
    },
    async events(threadId) {
      const stored = await store.readStream(orm.em.fork(), threadStreamId(threadId));
      return stored.map((e) => ({ type: e.type, data: e.data }) as ThreadEvent);
    },
    async eventCount() {
      const [row] = await sql<{ n: string }>(
        orm.em.fork(),
        'select count(*)::text as n from matching.events',
      );
      return Number(row!.n);
    },
    async buildAnother(extra = {}, deps = {}) {
      const other = await buildApp({ config: configOf(extra), orm, redis, ctx, metrics: false, ...deps });
      others.push(other);
      return other;
    },
    async close() {
      await app.close();
      for (const o of others) await o.close();
      const keys = await redis.keys(`${baseEnv.REDIS_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await Promise.all([orm.close(true), authOrm.close(true)]);
      await dropDatabase(config.DATABASE_URL);
    },
  };
}

type Res = Awaited<ReturnType<App['inject']>>;

/** §0.3 / §12 line 68: a non-empty body is JSON. Returns the parsed body. */
export function body<T = unknown>(res: Res): T {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(res.body) as T;
}

/** Asserts an error answer: status and the exact `{error, code}` body shape. */
export function expectError(res: Res, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  const b = body<Record<string, unknown>>(res);
  expect(Object.keys(b).sort()).toEqual(['code', 'error']);
  expect(b.code).toBe(code);
  expect(typeof b.error).toBe('string');
  return b as { error: string; code: string };
}
