import { sql } from '@oan/db';
import type { AgentEvent } from '@oan/domain';
import { projection } from '../types.ts';

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
