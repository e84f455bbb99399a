import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migration, Migrator } from '@mikro-orm/migrations';
import pg from 'pg';

export { Migration, MikroORM };
export type { EntityManager };

export interface MigrationDef {
  name: string;
  class: new (...args: ConstructorParameters<typeof Migration>) => Migration;
}

export interface DatabaseOptions {
  url: string;
  /** The Postgres schema this process owns; its migrations table lives there. */
  schema: string;
  migrations?: MigrationDef[];
  entities?: Options['entities'];
  poolMax?: number;
  debug?: boolean;
}

/**
 * A MikroORM instance for one service. Creates the database when missing (tests use one
 * database per fleet) and runs this service's migrations before returning.
 */
export async function openDatabase(opts: DatabaseOptions): Promise<MikroORM> {
  await createDatabaseIfMissing(opts.url);
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    entities: opts.entities ?? [],
    discovery: { warnWhenNoEntities: false },
    ensureDatabase: false,
    pool: { min: 0, max: opts.poolMax ?? 10 },
    allowGlobalContext: false,
    debug: opts.debug ?? false,
    extensions: [Migrator],
    migrations: {
      tableName: `${opts.schema}.mikro_orm_migrations`,
      migrationsList: opts.migrations ?? [],
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
  });
  await migrateLocked(orm, opts);
  return orm;
}

/**
 * Creates the database when missing, before MikroORM connects. Processes of a fresh fleet start
 * together, so a concurrent CREATE that lost the race is fine. (MikroORM's own ensureDatabase leaves
 * the ORM connected to the management database when its CREATE fails, so it is not used.)
 */
export async function createDatabaseIfMissing(url: string): Promise<void> {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  u.pathname = '/postgres';
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    const r = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (r.rowCount) return;
    await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } catch (err) {
    const code = (err as { code?: string }).code;
    // 42P04 duplicate_database; 23505 the pg_database unique index of a concurrent CREATE.
    if (code !== '42P04' && code !== '23505') throw err;
  } finally {
    await client.end();
  }
}

/**
 * Several processes may start together against a fresh database: a session advisory lock,
 * held on a dedicated connection (a pooled one could differ between lock and unlock),
 * serializes their migrations.
 */
async function migrateLocked(orm: MikroORM, opts: DatabaseOptions): Promise<void> {
  const client = new pg.Client({ connectionString: opts.url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock(hashtext($1))', [`migrate:${opts.schema}`]);
    await client.query(`create schema if not exists "${opts.schema}"`);
    await orm.getMigrator().up();
  } finally {
    await client.end();
  }
}

/** Raw SQL with `?` placeholders, inside `em`'s transaction when it has one. */
export async function sql<T = Record<string, unknown>>(
  em: EntityManager,
  query: string,
  params: unknown[] = [],
): Promise<T[]> {
  const rows = await em.getConnection().execute(query, params, 'all', em.getTransactionContext());
  return rows as T[];
}

/** Runs `fn` in a transaction on a fresh fork of the ORM's EntityManager. */
export async function transaction<T>(orm: MikroORM, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return orm.em.fork().transactional(fn);
}

/** Drops a database created for a test fleet. */
export async function dropDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  const orm = await MikroORM.init({
    clientUrl: u.toString(),
    entities: [],
    discovery: { warnWhenNoEntities: false },
  });
  try {
    await orm.em
      .getConnection()
      .execute(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = ? and pid <> pg_backend_pid()`,
        [name],
      );
    await orm.em.getConnection().execute(`drop database if exists "${name.replace(/"/g, '')}"`);
  } finally {
    await orm.close(true);
  }
}
