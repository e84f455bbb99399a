import { sql, type EntityManager } from '@oan/db';

/**
 * Tables of schema `read` that are bookkeeping, not read models: a replay keeps them. Only
 * `read.oan_expected` (the last notification produced per recipient: a replay produces none, and a
 * stale row is satisfied, see its migration).
 */
export const KEPT_BY_REPLAY: readonly string[] = ['read.oan_expected'];

/**
 * Every read model's table: all of schema `read` but `KEPT_BY_REPLAY`, read from the catalogue, so a
 * new read model is emptied and rebuilt by a replay (and compared by its checks) without being listed
 * anywhere.
 */
export async function readModelTables(em: EntityManager): Promise<string[]> {
  return readModelsOf(await sql<{ name: string }>(em, READ_SCHEMA_TABLES));
}

/** Every table of schema `read`, as rows `{name: 'read.<table>'}` (for clients without an EntityManager). */
export const READ_SCHEMA_TABLES = `select 'read.' || table_name as name from information_schema.tables
  where table_schema = 'read' and table_type = 'BASE TABLE' order by table_name`;

/** The read models among the rows of `READ_SCHEMA_TABLES`. */
export const readModelsOf = (rows: readonly { name: string }[]): string[] =>
  rows.map((r) => r.name).filter((name) => !KEPT_BY_REPLAY.includes(name));
