import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { domainHeaders, startOutboxRelay, type OutboxRelay, type StoredEvent } from '@oan/eventstore';
import { createLogger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, silentLogger, type KafkaHandle } from '@oan/log';
import { ensureInfra, insertAccount, insertApiKey } from '@oan/testing';
import { loadProjectorConfig, topicNames } from '../../projector/src/config';
import { migrations as projectorMigrations } from '../../projector/src/migrations';
import { startPipeline, type Pipeline } from '../../projector/src/pipeline';
import { buildApp, createGoferContext, type GoferAppDeps } from '../src/app';
import type { GoferContext } from '../src/commands/context';
import { loadGofersConfig, type GofersConfig } from '../src/config';
import { createGoferStore, goferMigrations } from '../src/infra/store';

export const JWT_SECRET = 'gofers-service-test-secret-gofers-service';

export type RawEvent = Pick<StoredEvent, 'position' | 'type' | 'accountId' | 'streamId'> & {
  data: Record<string, unknown>;
};

type App = Awaited<ReturnType<typeof buildApp>>;

export interface GoferFleet {
  app: App;
  orm: MikroORM;
  redis: Redis;
  ctx: GoferContext;
  config: GofersConfig;
  /** An account of the credential view with an API key; its read.accounts row says `platform`. */
  account(platform?: string): Promise<{ accountId: string; headers: Record<string, string> }>;
  /** Every stored event of the gofers store, in position order. */
  events(): Promise<RawEvent[]>;
  /** Builds another app on the same database, Redis and pipeline (e.g. with other switches). */
  buildAnother(env?: Record<string, string>, deps?: Partial<GoferAppDeps>): Promise<App>;
  close(): Promise<void>;
}

const unique = () => randomBytes(5).toString('hex');

/**
 * The gofers app against real Postgres, Redis and Kafka, with the real outbox relay and projector
 * pipeline in-process (unique database, Redis prefix and topic prefix; all removed by `close`), so
 * the read models the routes read are built exactly as in production.
 */
export async function startGoferFleet(
  env: Record<string, string> = {},
  deps: Partial<GoferAppDeps> = {},
): Promise<GoferFleet> {
  ensureInfra();
  const id = unique();
  const baseEnv = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_t_${id}`,
    REDIS_PREFIX: `oan_t_${id}:`,
    TOPIC_PREFIX: `t${id}.`,
  };
  const configOf = (extra: Record<string, string>) => loadGofersConfig({ ...baseEnv, ...env, ...extra });
  const config = configOf({});
  const logger = createLogger('gofers-test', 'warn');

  const authOrm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'auth',
    migrations: [credentialsMigration],
  });
  const projectorOrm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'projector',
    migrations: projectorMigrations,
  });
  const store = createGoferStore();
  const orm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'gofers',
    migrations: goferMigrations(store),
  });
  const redis = new Redis(config.REDIS_URL);

  const registry = new SchemaRegistry(SCHEMAS_DIR);
  const kafka: KafkaHandle = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `gofers-t-${id}`,
    logger: silentLogger,
  });
  const pcfg = loadProjectorConfig({ ...baseEnv, DOMAIN_TOPICS: 'auth.events,gofers.events' });
  const topics = topicNames(pcfg);
  await kafka.ensureTopics([...topics.domain, topics.oan].map((topic) => ({ topic })));
  const producer = await kafka.producer({ idempotent: true });
  // As services/relay/src/main.ts does it: Avro value, domain headers (with the store position).
  const relay: OutboxRelay = await startOutboxRelay({
    databaseUrl: config.DATABASE_URL,
    schema: 'gofers',
    logger,
    idleMs: 200,
    encode: (e) => {
      const { value, headers } = registry.encode(e.type, e.data, e.version);
      return { key: e.accountId, value, headers: { ...domainHeaders(e), ...headers } };
    },
    publish: async (messages) => {
      await producer.send({ topic: `${baseEnv.TOPIC_PREFIX}gofers.events`, acks: -1, messages });
    },
  });
  const pipeline: Pipeline = await startPipeline({
    cfg: pcfg,
    orm: projectorOrm,
    kafka,
    registry,
    redis,
    logger,
    mode: 'live',
  });

  const ctx = createGoferContext({ config, orm, redis, store });
  const make = (extra: Record<string, string>, more: Partial<GoferAppDeps>) => {
    const cfg = configOf(extra);
    // Another configuration (OAN_WEB_BASE_URL…) gets its own context over the same store.
    const appCtx =
      Object.keys(extra).length === 0 ? ctx : createGoferContext({ config: cfg, orm, redis, store });
    return buildApp({ config: cfg, orm, redis, ctx: appCtx, metrics: false, ...deps, ...more });
  };
  const app = await make({}, {});
  const others: App[] = [];

  return {
    app,
    orm,
    redis,
    ctx,
    config,
    async account(platform = 'other') {
      const accountId = await insertAccount(authOrm);
      const { key } = await insertApiKey(authOrm, accountId);
      // The projector's copy of the account (read.accounts), as AccountRegistered would make it.
      await sql(
        projectorOrm.em.fork(),
        `insert into read.accounts (id, email, source_platform, created_at) values (?, ?, ?, now())`,
        [accountId, `${accountId}@example.test`, platform],
      );
      return { accountId, headers: { authorization: `Bearer ${key}` } };
    },
    events: () =>
      sql<RawEvent>(
        orm.em.fork(),
        `select position::text as position, type, account_id as "accountId", stream_id as "streamId", data
           from gofers.events order by position`,
      ),
    async buildAnother(extra = {}, more = {}) {
      const other = await make(extra, more);
      others.push(other);
      return other;
    },
    async close() {
      await app.close();
      for (const o of others) await o.close();
      await pipeline.stop();
      await relay.stop();
      await kafka.deleteTopics([...topics.domain, topics.oan]).catch(() => undefined);
      const admin = await kafka.admin();
      await admin.deleteGroups([topics.domainGroup, topics.oanGroup]).catch(() => undefined);
      await kafka.close();
      const keys = await redis.keys(`${baseEnv.REDIS_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await Promise.all([orm.close(true), authOrm.close(true), projectorOrm.close(true)]);
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
}

/**
 * The gofers schema plus the neighbours its commands read in production, for reactor tests that run
 * no projector: auth's credential view (`auth.accounts`, as migrated by auth) and a bare
 * `read.accounts` that the test fills when it needs a projected registration.
 */
export async function openGofersDatabase(
  url: string,
  store: ReturnType<typeof createGoferStore>,
): Promise<MikroORM> {
  const authOrm = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
  await authOrm.close(true);
  const orm = await openDatabase({ url, schema: 'gofers', migrations: goferMigrations(store) });
  await sql(orm.em.fork(), 'create schema if not exists read');
  await sql(
    orm.em.fork(),
    'create table if not exists read.accounts (id text primary key, source_platform text)',
  );
  return orm;
}
