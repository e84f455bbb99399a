import { READ_SCHEMA_TABLES, readModelsOf } from '@oan/projection';
import { waitFor } from '@oan/testing';
import { dumpTables, EVENT_STORES as V1_STORES, withClient } from '../support.ts';

/**
 * The event stores the fleet's outbox publishes (services/outbox OUTBOX_SCHEMAS by default): the
 * four of protocol v1 and the agents context's.
 */
const EVENT_STORES = [...V1_STORES, 'agents'];

/** The tables a replay rebuilds: every read model (as the replay finds them, `readModelTables`). */
export function readTablesOf(databaseUrl: string): Promise<string[]> {
  return withClient(databaseUrl, async (client) =>
    readModelsOf((await client.query<{ name: string }>(READ_SCHEMA_TABLES)).rows),
  );
}

/**
 * Makes the fleet's own database refuse connections and drops its sessions, leaving the shared
 * server alone; returns the function that lets connections in again.
 */
export async function refuseConnections(databaseUrl: string): Promise<() => Promise<void>> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const run = (sql: string, params: unknown[] = []) =>
    withClient(admin.toString(), async (client) => {
      await client.query(sql, params);
    });
  await run(`alter database "${name}" allow_connections false`);
  await run(
    `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
    [name],
  );
  return () => run(`alter database "${name}" allow_connections true`);
}

/** Waits until the tables read the same twice in a row, a second apart: the projector caught up. */
export async function waitQuiet(databaseUrl: string, tables: string[]): Promise<void> {
  let last = '';
  await waitFor(
    async () => {
      const now = JSON.stringify(await dumpTables(databaseUrl, tables));
      const same = now === last;
      last = now;
      return same;
    },
    { timeoutMs: 60_000, intervalMs: 1000, what: 'the read models to settle' },
  );
}

/**
 * Whether the projector has applied everything stored: for each event store (a schema whose outbox
 * the fleet publishes), every partition key's last position is the one stage 1 recorded as applied
 * (`read.applied_positions`, per key and source), and every notification stage 1 produced is in the
 * event table (`read.oan_expected`). A replay must then rebuild exactly what the tables hold.
 */
export function projectionCaughtUp(
  databaseUrl: string,
  schemas: readonly string[] = EVENT_STORES,
): Promise<boolean> {
  return withClient(databaseUrl, async (client) => {
    const stored = schemas
      .map(
        (s) =>
          `select '${s}' as source, account_id, max(position) as last from "${s}".events group by account_id`,
      )
      .join(' union all ');
    const behind = await client.query(
      `select 1 from (${stored}) s
        left join read.applied_positions a on a.account_id = s.account_id and a.source = s.source
        where a.position is distinct from s.last
       union all
       select 1 from read.oan_expected x
        where not exists (select 1 from read.oan_event e where e.event_id = x.event_id)
       limit 1`,
    );
    return behind.rows.length === 0;
  });
}

/** The event stores this fleet's database holds (`<schema>.events`), of the ones the fleet publishes. */
export function eventStoreSchemas(databaseUrl: string): Promise<string[]> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ schema: string }>(
      `select table_schema as schema from information_schema.tables
        where table_name = 'events' and table_schema = any($1::text[]) order by 1`,
      [EVENT_STORES],
    );
    return rows.map((r) => r.schema);
  });
}

/** Each event store's last position: what was appended so far (compared before and after a replay). */
export function storeHeads(databaseUrl: string, schemas: readonly string[]): Promise<string> {
  return withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ heads: string }>(
      `select ${schemas.map((s) => `(select coalesce(max(position), 0) from "${s}".events)::text`).join(" || ',' || ")} as heads`,
    );
    return rows[0]!.heads;
  });
}
