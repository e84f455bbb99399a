import { sql, type EntityManager } from '@oan/db';

// Queries other code may run on the agents table (no service writes its own SQL against it).

export interface AgentRow {
  address: string;
  summary: string;
  endpoints: string[];
  profile: Record<string, unknown> | null;
  connection_id: string;
  announced_at: Date | string;
}

/** The agent at `address` while its latest socket is up. */
export async function onlineAgent(em: EntityManager, address: string): Promise<AgentRow | undefined> {
  const [row] = await sql<AgentRow>(
    em,
    `select address, summary, endpoints, profile, connection_id, announced_at
       from read.agents where address = ? and online`,
    [address],
  );
  return row;
}

/** Online agents, most recently announced first (FIND ranks them; seed 001 returns ten). */
export function onlineAgents(em: EntityManager, limit = 500): Promise<AgentRow[]> {
  return sql<AgentRow>(
    em,
    `select address, summary, endpoints, profile, connection_id, announced_at
       from read.agents where online order by announced_at desc limit ?`,
    [limit],
  );
}
