import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql, type MigrationDef, type MikroORM } from '@oan/db';
import { domainHeaders, startOutboxRelay, type OutboxRelay } from '@oan/eventstore';
import { createLogger, type Logger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, silentLogger, type KafkaHandle } from '@oan/log';
import { insertAccount, insertApiKey } from './credentials';
import { ensureInfra } from './testFleet';

/**
 * The projector's parts a service test runs in-process (passed in: a library never imports a
 * service): its migrations, config, topic names and the live pipeline.
 */
export interface ProjectorParts<C> {
  migrations: MigrationDef[];
  loadConfig(env: Record<string, string>): C;
  topicNames(cfg: C): { domain: string[]; oan: string; domainGroup: string; oanGroup: string };
  startPipeline(deps: {
    cfg: C;
    orm: MikroORM;
    kafka: KafkaHandle;
    registry: SchemaRegistry;
    redis: Redis;
    logger: Logger;
    mode: 'live';
  }): Promise<{ stop(): Promise<void> }>;
}

export interface InProcessFleetOptions<C> {
  /** Names the Kafka client and logger. */
  name: string;
  /** Event stores of the service(s) under test: opened (migrated) and relayed to `<schema>.events`. */
  stores: { schema: string; migrations: MigrationDef[] }[];
  /** Domain topics the projector consumes (without prefix), e.g. `['auth.events', 'gofers.events']`. */
  domainTopics: string[];
  projector: ProjectorParts<C>;
  /** Extra variables for the service's config (merged over `baseEnv`). */
  env?: Record<string, string>;
}

export interface InProcessFleet {
  /** NODE_ENV, LOG_LEVEL, ENABLE_OPEN_API, JWT_SECRET, DATABASE_URL, REDIS_PREFIX, TOPIC_PREFIX + `env`. */
  baseEnv: Record<string, string>;
  /** The ORM of each store, by schema. */
  orms: Record<string, MikroORM>;
  projectorOrm: MikroORM;
  authOrm: MikroORM;
  redis: Redis;
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  logger: Logger;
  /** An account of the credential view with an API key, and its read.accounts row (`platform`). */
  account(platform?: string): Promise<{ accountId: string; headers: Record<string, string> }>;
  /** Stops the relays and the pipeline, removes topics, groups, Redis keys and the database. */
  close(): Promise<void>;
}

const JWT_SECRET = 'in-process-fleet-test-secret-0123456789';

/**
 * A service's world against real Postgres, Redis and Kafka, with the real outbox relay and projector
 * pipeline in-process (unique database, Redis prefix and topic prefix; all removed by `close`), so
 * the read models a service reads are built exactly as in production.
 */
export async function startInProcessFleet<C>(opts: InProcessFleetOptions<C>): Promise<InProcessFleet> {
  ensureInfra();
  const id = randomBytes(5).toString('hex');
  const baseEnv: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_t_${id}`,
    REDIS_PREFIX: `oan_t_${id}:`,
    TOPIC_PREFIX: `t${id}.`,
    ...opts.env,
  };
  const databaseUrl = baseEnv.DATABASE_URL!;
  const logger = createLogger(`${opts.name}-test`, 'warn');
  const authOrm = await openDatabase({
    url: databaseUrl,
    schema: 'auth',
    migrations: [credentialsMigration],
  });
  const projectorOrm = await openDatabase({
    url: databaseUrl,
    schema: 'projector',
    migrations: opts.projector.migrations,
  });
  const orms: Record<string, MikroORM> = {};
  for (const s of opts.stores) {
    orms[s.schema] = await openDatabase({ url: databaseUrl, schema: s.schema, migrations: s.migrations });
  }
  const redis = new Redis(baseEnv.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const registry = new SchemaRegistry(SCHEMAS_DIR);
  const kafka = createKafka({
    brokers: (baseEnv.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    clientId: `${opts.name}-t-${id}`,
    logger: silentLogger,
  });
  const pcfg = opts.projector.loadConfig({ ...baseEnv, DOMAIN_TOPICS: opts.domainTopics.join(',') });
  const topics = opts.projector.topicNames(pcfg);
  await kafka.ensureTopics([...topics.domain, topics.oan].map((topic) => ({ topic })));
  const producer = await kafka.producer({ idempotent: true });
  // As services/relay/src/main.ts does it: Avro value, domain headers (with the store position).
  const relays: OutboxRelay[] = [];
  for (const s of opts.stores) {
    relays.push(
      await startOutboxRelay({
        databaseUrl,
        schema: s.schema,
        logger,
        idleMs: 200,
        encode: (e) => {
          const { value, headers } = registry.encode(e.type, e.data, e.version);
          return { key: e.accountId, value, headers: { ...domainHeaders(e), ...headers } };
        },
        publish: async (messages) => {
          await producer.send({ topic: `${baseEnv.TOPIC_PREFIX}${s.schema}.events`, acks: -1, messages });
        },
      }),
    );
  }
  const pipeline = await opts.projector.startPipeline({
    cfg: pcfg,
    orm: projectorOrm,
    kafka,
    registry,
    redis,
    logger,
    mode: 'live',
  });

  return {
    baseEnv,
    orms,
    projectorOrm,
    authOrm,
    redis,
    kafka,
    registry,
    logger,
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
    async close() {
      await pipeline.stop();
      for (const r of relays) await r.stop();
      await kafka.deleteTopics([...topics.domain, topics.oan]).catch(() => undefined);
      const admin = await kafka.admin();
      await admin.deleteGroups([topics.domainGroup, topics.oanGroup]).catch(() => undefined);
      await kafka.close();
      const keys = await redis.keys(`${baseEnv.REDIS_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await Promise.all([...Object.values(orms), authOrm, projectorOrm].map((o) => o.close(true)));
      await dropDatabase(databaseUrl);
    },
  };
}
