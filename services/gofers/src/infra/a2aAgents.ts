import { sql, type EntityManager } from '@oan/db';

/** A Gofer's row in `gofers.a2a_agents` (ADR 0035). */
export interface A2AAgentRow {
  goferId: string;
  accountId: string;
  published: boolean;
}

export async function a2aAgentOf(em: EntityManager, goferId: string): Promise<A2AAgentRow | undefined> {
  const [row] = await sql<A2AAgentRow>(
    em,
    `select gofer_id as "goferId", account_id as "accountId", published from gofers.a2a_agents where gofer_id = ?`,
    [goferId],
  );
  return row;
}

/** The Gofers of an account that are on A2A now (a ban takes them off). */
export async function publishedA2AAgentsOf(em: EntityManager, accountId: string): Promise<string[]> {
  const rows = await sql<{ goferId: string }>(
    em,
    `select gofer_id as "goferId" from gofers.a2a_agents where account_id = ? and published`,
    [accountId],
  );
  return rows.map((r) => r.goferId);
}

/** Inline, in the transaction of the event that decides it (published, unpublished, deleted). */
export async function setA2APublished(
  em: EntityManager,
  row: { goferId: string; accountId: string; published: boolean; now: string },
): Promise<void> {
  await sql(
    em,
    `insert into gofers.a2a_agents (gofer_id, account_id, published, updated_at) values (?, ?, ?, ?)
     on conflict (gofer_id) do update set published = excluded.published, updated_at = excluded.updated_at`,
    [row.goferId, row.accountId, row.published, row.now],
  );
}

/** A deleted Gofer is off A2A too (in the deletion's transaction; no row, nothing to do). */
export async function clearA2APublished(em: EntityManager, goferId: string, now: string): Promise<void> {
  await sql(em, 'update gofers.a2a_agents set published = false, updated_at = ? where gofer_id = ?', [
    now,
    goferId,
  ]);
}
