import pg from 'pg';

/** Every row of the event table, in a stable order, as text: what "byte for byte" compares. */
export async function dumpEventTable(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query<{ line: string }>(
      `select account_id || '|' || seq || '|' || event_id || '|' || type || '|' || envelope || '|' || created_at::text as line
         from read.oan_event order by account_id, seq`,
    );
    return r.rows.map((row) => row.line);
  } finally {
    await client.end();
  }
}

/** Every row of each table as JSON text, in primary-key order: a replay must reproduce them. */
export async function dumpTables(databaseUrl: string, tables: string[]): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const r = await client.query<{ row: string }>(`select to_jsonb(x)::text as row from ${t} x order by 1`);
      out[t] = r.rows.map((row) => row.row);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Runs statements against the fleet's database (to damage read models a replay must rebuild). */
export async function corrupt(databaseUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
