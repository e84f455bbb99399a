/*
 * One service's world for its integration tests (services/<name>/test): no child processes; the
 * service's event stores, auth's credential view, Redis and, when asked, the real outbox publisher
 * and projector pipeline run inside the test process, so the test calls the service's app through
 * `app.inject` and reads what the pipeline built. End-to-end tests start the whole fleet with
 * testFleet.ts instead.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql, type MigrationDef, type MikroORM } from '@oan/db';
import { domainHeaders, startOutboxPublisher, type StoredEvent } from '@oan/eventstore';
import { createLogger, type Logger } from '@oan/http';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, silentLogger, type KafkaHandle } from '@oan/kafka';
import { insertAccount, insertApiKey } from './credentials.ts';
import { ensureInfra } from './testFleet.ts';

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

/** What every in-process world is made of: the service's event store(s), auth's credential view, Redis. */
export interface InProcessStoresOptions {
  /** Names the Kafka client and logger. */
  name: string;
  /** Event stores of the service(s) under test: opened (migrated), and published to `<schema>.events` when a projector runs. */
  stores: { schema: string; migrations: MigrationDef[] }[];
  /** Extra variables for the service's config (merged over `baseEnv`). */
  env?: Record<string, string>;
}

export interface InProcessFleetOptions<C> extends InProcessStoresOptions {
  /** Domain topics the projector consumes (without prefix), e.g. `['auth.events', 'gofers.events']`. */
  domainTopics: string[];
  projector: ProjectorParts<C>;
}

/** A row of a store's `events` table, as stored (position as text, data as JSON). */
export type RawStoredEvent = Pick<StoredEvent, 'position' | 'type' | 'partitionKey' | 'streamId'> & {
  data: Record<string, unknown>;
};

/** The credentials of `account()`: the account's realm and its API key's permissions (all by default). */
export interface AccountOptions {
  realm?: string;
  permissions?: readonly string[];
}

export interface InProcessStores {
  /** NODE_ENV, LOG_LEVEL, ENABLE_OPEN_API, JWT_SECRET, ID_SECRET, DATABASE_URL, REDIS_PREFIX, TOPIC_PREFIX + `env`. */
  baseEnv: Record<string, string>;
  /** The ORM of each store, by schema. */
  orms: Record<string, MikroORM>;
  authOrm: MikroORM;
  redis: Redis;
  logger: Logger;
  /** An account of the credential view (registered on `platform`, default `other`) with an API key. */
  account(
    opts?: AccountOptions & { platform?: string },
  ): Promise<{ accountId: string; headers: Record<string, string> }>;
  /** Every stored event of a store (one of `stores`), in position order. */
  events(schema: string): Promise<RawStoredEvent[]>;
  /**
   * Hands something built on this world (an app, a listener…) to `close`, which closes what it was
   * given first, the last given first. Returns it.
   */
  adopt<T extends { close(): Promise<unknown> }>(closable: T): T;
  /** Closes what was adopted, then removes everything the world made (Redis keys, the database…). */
  close(): Promise<void>;
}

export interface InProcessFleet extends InProcessStores {
  projectorOrm: MikroORM;
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  /**
   * Closes what was adopted, stops the pipeline and the outbox publishers, removes topics and groups, then
   * Redis keys and the database.
   */
  close(): Promise<void>;
}

const JWT_SECRET = 'in-process-fleet-test-secret-0123456789';
const ID_SECRET = 'in-process-fleet-id-secret-0123456789';

/**
 * A service's world against real Postgres, Redis and Kafka, with the real outbox publisher and projector
 * pipeline in-process (unique database, Redis prefix and topic prefix; all removed by `close`), so
 * the read models a service reads are built exactly as in production. Without `projector`, only
 * the stores, auth's credential view and Redis (no Kafka, outbox publisher or pipeline).
 *
 * Whatever fails while starting, what was already made is removed before the error is rethrown.
 */
export function startInProcessFleet<C>(opts: InProcessFleetOptions<C>): Promise<InProcessFleet>;
export function startInProcessFleet(
  opts: InProcessStoresOptions & { projector?: undefined },
): Promise<InProcessStores>;
export async function startInProcessFleet<C>(
  opts: InProcessStoresOptions & Partial<Pick<InProcessFleetOptions<C>, 'domainTopics' | 'projector'>>,
): Promise<InProcessStores | InProcessFleet> {
  ensureInfra();
  const id = randomBytes(5).toString('hex');
  const baseEnv: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    ENABLE_OPEN_API: 'true',
    JWT_SECRET,
    ID_SECRET,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_t_${id}`,
    REDIS_PREFIX: `oan_t_${id}:`,
    TOPIC_PREFIX: `t${id}.`,
    ...opts.env,
  };
  const databaseUrl = baseEnv.DATABASE_URL!;
  const logger = createLogger(`${opts.name}-test`, 'warn');

  // What `close` undoes, in reverse order of making: adopted things, the pipeline, the outbox publishers,
  // topics and groups, the Kafka client, Redis keys, the ORMs, and last the database.
  const undo: (() => Promise<unknown>)[] = [];
  const close = async () => {
    let failure: Error | undefined;
    for (let step = undo.pop(); step; step = undo.pop()) {
      try {
        await step();
      } catch (err) {
        failure ??= err instanceof Error ? err : new Error(String(err));
      }
    }
    if (failure) throw failure;
  };
  const open = async (schema: string, migrations: MigrationDef[]) => {
    const orm = await openDatabase({ url: databaseUrl, schema, migrations });
    undo.push(() => orm.close(true));
    return orm;
  };

  try {
    undo.push(() => dropDatabase(databaseUrl));
    const authOrm = await open('auth', [credentialsMigration]);
    const projectorOrm = opts.projector ? await open('projector', opts.projector.migrations) : undefined;
    const orms: Record<string, MikroORM> = {};
    for (const s of opts.stores) orms[s.schema] = await open(s.schema, s.migrations);
    const redis = new Redis(baseEnv.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
    undo.push(async () => {
      const keys = await redis.keys(`${baseEnv.REDIS_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    const stores: InProcessStores = {
      baseEnv,
      orms,
      authOrm,
      redis,
      logger,
      async account(o: AccountOptions & { platform?: string } = {}) {
        // The registration platform is in the credential view, as registration writes it.
        const accountId = await insertAccount(authOrm, {
          ...(o.realm ? { realm: o.realm } : {}),
          ...(o.platform ? { platform: o.platform } : {}),
        });
        const { key } = await insertApiKey(
          authOrm,
          accountId,
          o.permissions ? { permissions: o.permissions } : {},
        );
        return { accountId, headers: { authorization: `Bearer ${key}` } };
      },
      events(schema) {
        const orm = orms[schema];
        if (!orm) throw new Error(`no store ${schema} in this fleet`);
        return sql<RawStoredEvent>(
          orm.em.fork(),
          `select position::text as position, type, account_id as "partitionKey", stream_id as "streamId", data
             from "${schema}".events order by position`,
        );
      },
      adopt(closable) {
        undo.push(() => closable.close());
        return closable;
      },
      close,
    };
    if (!opts.projector || !projectorOrm) return stores;

    const registry = new SchemaRegistry(SCHEMAS_DIR);
    const kafka = createKafka({
      brokers: (baseEnv.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
      clientId: `${opts.name}-t-${id}`,
      logger: silentLogger,
    });
    undo.push(() => kafka.close());
    const pcfg = opts.projector.loadConfig({
      ...baseEnv,
      DOMAIN_TOPICS: (opts.domainTopics ?? []).join(','),
    });
    const topics = opts.projector.topicNames(pcfg);
    undo.push(async () => {
      await kafka.deleteTopics([...topics.domain, topics.oan]).catch(() => undefined);
      const admin = await kafka.admin();
      await admin.deleteGroups([topics.domainGroup, topics.oanGroup]).catch(() => undefined);
    });
    await kafka.ensureTopics([...topics.domain, topics.oan].map((topic) => ({ topic })));
    const producer = await kafka.producer({ idempotent: true });
    // As services/outbox/src/main.ts does it: Avro value, domain headers (with the store position).
    for (const s of opts.stores) {
      const outbox = await startOutboxPublisher({
        databaseUrl,
        schema: s.schema,
        logger,
        idleMs: 200,
        encode: (e) => {
          const { value, headers } = registry.encode(e.type, e.data, e.version);
          return { key: e.partitionKey, value, headers: { ...domainHeaders(e), ...headers } };
        },
        publish: async (messages) => {
          await producer.send({ topic: `${baseEnv.TOPIC_PREFIX}${s.schema}.events`, acks: -1, messages });
        },
      });
      undo.push(() => outbox.stop());
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
    undo.push(() => pipeline.stop());

    return { ...stores, projectorOrm, kafka, registry };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
