import type { MikroORM } from '@oan/db';
import { onlineAgent, onlineAgents, type AgentRow } from '@oan/readmodels';
import { rankAgents, type Listed } from '../domain/find.ts';
import type { Registry } from '../infra/registry.ts';

const listed = (r: AgentRow): Listed => ({
  address: r.address,
  summary: r.summary,
  endpoints: r.endpoints,
  lastSeen: Math.floor(new Date(r.announced_at).getTime() / 1000),
});

/**
 * Lookups: the read model (the directory the log rebuilds) for what an agent announced, checked
 * against the routing table so that an agent whose socket is gone is not answered for long after
 * (the read model follows its departure a projector step later).
 */
export class Directory {
  private readonly orm: MikroORM;
  private readonly registry: Registry;
  constructor(orm: MikroORM, registry: Registry) {
    this.orm = orm;
    this.registry = registry;
  }

  async get(address: string): Promise<Listed | undefined> {
    const row = await onlineAgent(this.orm.em.fork(), address);
    if (!row || !(await this.registry.owner(address))) return undefined;
    return listed(row);
  }

  async find(query: string): Promise<Listed[]> {
    const live = await this.registry.owners();
    const rows = await onlineAgents(this.orm.em.fork());
    return rankAgents(query, rows.filter((r) => live.has(r.address)).map(listed));
  }
}

/** Seed 001's agent object (AGENT_INFO, AGENTS) and the HTTP lookup's body. */
export const agentJson = (a: Listed) => ({
  address: a.address,
  summary: a.summary,
  endpoints: a.endpoints,
  last_seen: a.lastSeen,
  online: true,
});
