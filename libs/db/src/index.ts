import { MikroORM, type EntityManager, type Options } from '@mikro-orm/postgresql';
import { Migration, Migrator } from '@mikro-orm/migrations';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pRetry from 'p-retry';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

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
  /**
   * false: this process's commits do not wait for their WAL flush (`synchronous_commit = off`). Only
   * for writers whose every write can be made again from the log (the projector): a server crash
   * may lose its last few hundred milliseconds of commits, never a part of one (docs/adr/0015).
   */
  synchronousCommit?: boolean;
  /**
   * What `pg_stat_activity.application_name` shows for this process's connections, so an operator
   * (and a test) can tell whose they are; `oan-<schema>` unless told.
   */
  applicationName?: string;
  /** Where the wait for a server that does not answer yet is told of (a pino logger fits). */
  logger?: WarnSink;
}

/** The one level of logger `openDatabase` writes to. */
export interface WarnSink {
  warn(obj: object, msg: string): void;
}

/** Without a logger: one JSON line on stderr, as the fleet's loggers write them. */
const stderrWarn: WarnSink = {
  warn: (obj, msg) =>
    process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), ...obj, msg })}\n`),
};

/**
 * Error codes that say the server did not answer: the socket's (refused, reset, timed out,
 * unreachable, a name not resolved yet) and Postgres's (shutting down, starting up, connection
 * failures: SQLSTATE classes 57P and 08).
 */
const AWAY = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * Whether a Postgres client error says the server does not answer (down, starting up, shutting
 * down, not reachable yet), rather than refusing what was asked. Causes and the attempts of an
 * `AggregateError` (one per address a name resolved to) count too.
 */
export function databaseAway(err: unknown): boolean {
  let e = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && AWAY.has(code)) return true;
    if (e instanceof Error && e.message.startsWith('Connection terminated')) return true;
    if (e instanceof AggregateError && e.errors.some(databaseAway)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `call` again for as long as it fails because the server does not answer (`databaseAway`),
 * pausing 100 ms doubling up to 5 s, with a warning each time; any other error ends the wait. No time
 * limit, as for the Kafka broker (ADR 0055, ADR 0057).
 */
function untilDatabaseAnswers<T>(what: string, call: () => Promise<T>, logger: WarnSink): Promise<T> {
  return pRetry(() => call(), {
    retries: Infinity,
    minTimeout: 100,
    factor: 2,
    maxTimeout: 5_000,
    shouldRetry: ({ error, attemptNumber }) => {
      if (!databaseAway(error)) return false;
      logger.warn(
        { err: String(error), attempt: attemptNumber - 1, what },
        'database does not answer yet; waiting for it',
      );
      return true;
    },
  });
}

/**
 * A MikroORM instance for one service. Creates the database when missing (tests use one
 * database per fleet) and runs this service's migrations before returning. A server that does not
 * answer yet (a process started while Postgres is down or starting) is waited for, however long.
 */
export async function openDatabase(opts: DatabaseOptions): Promise<MikroORM> {
  const logger = opts.logger ?? stderrWarn;
  await untilDatabaseAnswers(
    'create the database if missing',
    () => createDatabaseIfMissing(opts.url),
    logger,
  );
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    entities: opts.entities ?? [],
    discovery: { warnWhenNoEntities: false },
    ensureDatabase: false,
    pool: { min: 0, max: opts.poolMax ?? 10 },
    driverOptions: {
      connection: {
        application_name: opts.applicationName ?? `oan-${opts.schema}`,
        ...(opts.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
      },
    },
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
  try {
    await untilDatabaseAnswers(`migrate ${opts.schema}`, () => migrateLocked(orm, opts), logger);
  } catch (err) {
    await orm.close(true);
    throw err;
  }
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
  // A server that goes away fails the query in flight; the client's own error event is not a crash.
  client.on('error', () => undefined);
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
  // Idle while the migrations run on the pool's connections: a server that goes away fails those.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('select pg_advisory_lock(hashtext($1))', [`migrate:${opts.schema}`]);
    await client.query(`create schema if not exists "${opts.schema}"`);
    await orm.getMigrator().up();
  } finally {
    await client.end();
  }
}

/**
 * A query's text around its `?` placeholders (outside quotes and comments): n placeholders, n + 1
 * parts. Split once per query text.
 */
const splitCache = new Map<string, string[]>();

function splitPlaceholders(query: string): string[] {
  const cached = splitCache.get(query);
  if (cached) return cached;
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === "'" || c === '"') {
      // A quoted literal or identifier; a doubled quote inside it is part of it.
      for (i++; i < query.length; i++) {
        if (query[i] === c) {
          if (query[i + 1] === c) i++;
          else break;
        }
      }
    } else if (c === '-' && query[i + 1] === '-') {
      while (i < query.length && query[i] !== '\n') i++;
    } else if (c === '?') {
      parts.push(query.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(query.slice(from));
  if (splitCache.size < 2000) splitCache.set(query, parts);
  return parts;
}

/**
 * `?` → `$n`. An array parameter becomes a list of parameters (`in (?)` with [a, b] → `in ($1, $2)`,
 * an empty one `null`), as the ORM's formatter did. Only a text without such lists is worth a name.
 */
function toPositional(query: string, params: unknown[]): { text: string; values: unknown[]; fixed: boolean } {
  const parts = splitPlaceholders(query);
  if (parts.length - 1 !== params.length) {
    throw new Error(`sql(): ${parts.length - 1} placeholders but ${params.length} parameters`);
  }
  if (params.length === 0) return { text: query, values: [], fixed: true };
  const values: unknown[] = [];
  let fixed = true;
  let text = parts[0]!;
  params.forEach((p, i) => {
    if (Array.isArray(p) && !Buffer.isBuffer(p)) {
      fixed = false;
      if (p.length === 0) text += 'null';
      else text += p.map((v) => (values.push(v), `$${values.length}`)).join(', ');
    } else {
      values.push(p);
      text += `$${values.length}`;
    }
    text += parts[i + 1]!;
  });
  return { text, values, fixed };
}

const statementNames = new Map<string, string>();

/** A stable name per statement text: node-postgres prepares it once per connection and reuses the plan. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `oan_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (statementNames.size < 5000) statementNames.set(text, name);
  }
  return name;
}

/** A statement as `sql()` was given it (`?` placeholders) and its parameters. */
export interface ObservedStatement {
  sql: string;
  bindings: unknown[];
}

const observers = new Set<(s: ObservedStatement) => void>();

/** Calls `fn` with every statement `sql()` sends from now on (tests, diagnostics); returns the stop. */
export function observeStatements(fn: (s: ObservedStatement) => void): () => void {
  observers.add(fn);
  return () => observers.delete(fn);
}

interface KnexClientLike {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(c: pg.Client): Promise<unknown>;
}

/**
 * A `text[]` parameter: `sql()` expands a JS array into a value list (a new statement text per length,
 * which Postgres cannot keep prepared), so arrays travel as JSON text (`JSON.stringify(values)`) and
 * become `text[]` here.
 */
export const TEXT_ARRAY = 'array(select jsonb_array_elements_text(?::jsonb))';

/** A timestamptz column as the protocol's ISO-8601 text: UTC, milliseconds, `Z`. */
export const isoUtc = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Raw SQL with `?` placeholders, inside `em`'s transaction when it has one. Sent straight to the
 * node-postgres connection the ORM's pool (or the transaction) holds, as a named prepared statement
 * with its parameters bound, never interpolated into the text: Postgres parses and plans each
 * statement once per connection, and the ORM's per-query formatting is skipped.
 */
export async function sql<T = Record<string, unknown>>(
  em: EntityManager,
  query: string,
  params: unknown[] = [],
): Promise<T[]> {
  if (held.get(em)?.size) await writeHeld(em);
  const { text, values, fixed } = toPositional(query, params);
  for (const o of observers) o({ sql: query, bindings: params });
  const config: pg.QueryConfig = fixed ? { name: statementName(text), text, values } : { text, values };
  return withConnection(em, async (conn) => (await conn.query(config)).rows as T[]);
}

/** Runs `fn` on `em`'s transaction's connection, or on one of the pool's for as long as it runs. */
async function withConnection<T>(em: EntityManager, fn: (conn: pg.Client) => Promise<T>): Promise<T> {
  const trx = em.getTransactionContext<{ client: KnexClientLike }>();
  if (trx) return fn(await trx.client.acquireConnection());
  const client = (em.getConnection().getKnex() as unknown as { client: KnexClientLike }).client;
  const conn = await client.acquireConnection();
  try {
    return await fn(conn);
  } finally {
    await client.releaseConnection(conn);
  }
}

/** COPY's text format: a backslash, newline, carriage return or tab in a value is escaped. */
const COPY_SPECIALS = /[\\\n\r\t]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const copyValue = (v: string | null): string =>
  v === null ? '\\N' : v.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!);

/**
 * Inserts `rows` (values as text, in `columns`' order; null for SQL null) into `table` with one
 * `COPY … FROM STDIN`, inside `em`'s transaction when it has one. Postgres reads COPY's text format
 * at a fraction of the cost of a JSON parameter, for a plain insert of many rows: no `on conflict`,
 * so a duplicate key fails the statement (and the transaction) as an insert would.
 */
export async function copyRows(
  em: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly (string | null)[])[],
): Promise<void> {
  if (rows.length === 0) return;
  if (held.get(em)?.size) await writeHeld(em);
  const statement = `copy ${table} (${columns.join(', ')}) from stdin`;
  for (const o of observers) o({ sql: statement, bindings: [] });
  let text = '';
  for (const row of rows) text += row.map(copyValue).join('\t') + '\n';
  await withConnection(em, (conn) => pipeline(Readable.from([text]), conn.query(copyFrom(statement))));
}

/** Per EntityManager that holds inserts: statement → the rows it will insert, in first-use order. */
const held = new WeakMap<EntityManager, Map<string, unknown[]>>();

/**
 * Inserts `row` with `statement`, which reads its rows from one JSON array parameter
 * (`insert … select … from jsonb_to_recordset(?::jsonb) as x(…) on conflict … do nothing`): now, or,
 * while `em` holds inserts, with the other rows of the same statement in one round trip, written before
 * any other statement runs on `em` (so nothing can read around them) and at `releaseInserts`. Only for
 * inserts whose order against other tables' inserts does not matter (no foreign keys, no triggers).
 */
export async function insertRows(
  em: EntityManager,
  statement: string,
  row: Record<string, unknown>,
): Promise<void> {
  const rows = held.get(em);
  if (!rows) {
    await sql(em, statement, [JSON.stringify([row])]);
    return;
  }
  const list = rows.get(statement);
  if (list) list.push(row);
  else rows.set(statement, [row]);
}

/** From now on `insertRows` on `em` gathers rows until the next other statement or `releaseInserts`. */
export function holdInserts(em: EntityManager): void {
  held.set(em, held.get(em) ?? new Map<string, unknown[]>());
}

/** Writes the rows `em` holds, one statement per insert statement, and goes on holding. */
async function writeHeld(em: EntityManager): Promise<void> {
  const rows = held.get(em);
  if (!rows?.size) return;
  held.set(em, new Map<string, unknown[]>());
  for (const [statement, list] of rows) await sql(em, statement, [JSON.stringify(list)]);
}

/** Writes what `em` holds and stops holding. */
export async function releaseInserts(em: EntityManager): Promise<void> {
  await writeHeld(em);
  held.delete(em);
}

/** Forgets what `em` holds without writing it (its transaction failed) and stops holding. */
export function discardInserts(em: EntityManager): void {
  held.delete(em);
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
