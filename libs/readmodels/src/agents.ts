import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { AgentEvent } from '@oan/domain';
import { projection } from './types.ts';

/**
 * The agents context's read model (issue 16, docs/agent-relay.md): the ConnectOnion relay's
 * directory, one row per address with its latest announcement and whether that socket is still up.
 */
class CreateAgentsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.agents (
      address text primary key, summary text not null, endpoints jsonb not null, profile jsonb,
      announce_ts bigint not null, connection_id text not null, online boolean not null,
      announced_at timestamptz not null, departed_at timestamptz)`);
    this.addSql('create index if not exists agents_online on read.agents (online, announced_at desc)');
  }
}

/** This read model's tables, in migration order. */
export const agentsTables: MigrationDef[] = [{ name: 'read-0010-agents', class: CreateAgentsReadModel }];

/**
 * The latest announcement per address wins (the signed timestamp, then the relay's time, orders
 * them: one address's events share a partition, and a replay applies them again in order). A
 * departure applies only to the socket it names, so the close of a replaced socket changes nothing.
 */
export const agentsProjection = projection<AgentEvent>({
  async AgentAnnounced(em, { data: d }) {
    await sql(
      em,
      `insert into read.agents (address, summary, endpoints, profile, announce_ts, connection_id, online,
         announced_at) values (?, ?, ?::jsonb, ?::jsonb, ?, ?, true, ?)
       on conflict (address) do update set summary = excluded.summary, endpoints = excluded.endpoints,
         profile = excluded.profile, announce_ts = excluded.announce_ts,
         connection_id = excluded.connection_id, online = true, announced_at = excluded.announced_at,
         departed_at = null
       where (read.agents.announce_ts, read.agents.announced_at) <= (excluded.announce_ts, excluded.announced_at)`,
      [
        d.address,
        d.summary,
        JSON.stringify(d.endpoints),
        d.profile,
        Number(d.timestamp),
        d.connectionId,
        d.announcedAt,
      ],
    );
    return [];
  },
  async AgentDeparted(em, { data: d }) {
    await sql(
      em,
      `update read.agents set online = false, departed_at = ?
        where address = ? and connection_id = ? and online`,
      [d.departedAt, d.address, d.connectionId],
    );
    return [];
  },
});

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
