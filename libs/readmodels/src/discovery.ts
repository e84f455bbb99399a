import { sql, TEXT_ARRAY, type EntityManager } from '@oan/db';

/**
 * What discovery (services/matching) reads of the Gofer and thread read models. Its own index
 * (`matching.discovery_terms`) is joined with the Gofers through `LIVE_GOFERS`, a relation whose
 * text stays here with the table.
 */

/** The thread statuses that count as an open pairing against the caps. */
export const OPEN_THREAD_STATUSES = ['awaiting_confirmation', 'active'] as const;

/**
 * The live (not deleted) Gofers as a relation another owner's query may join: columns `id`,
 * `account_id`, `name`, `description`, `values`, `demands`, `source_platform`, `discovery_status`,
 * `updated_at`.
 */
export const LIVE_GOFERS = `(select id, account_id, name, description, "values", demands, source_platform,
    discovery_status, updated_at from read.gofers where deleted_at is null)`;

/** A Gofer discovery may pair, as the thread sides need it. */
export interface DiscoverySeedRow {
  id: string;
  account_id: string;
  name: string;
  source_platform: string;
}

/** The live Gofer `goferId`, if it is ready for pairing (or whatever its status, with `anyStatus`). */
export async function discoverySeed(
  em: EntityManager,
  goferId: string,
  anyStatus: boolean,
): Promise<DiscoverySeedRow | undefined> {
  const [row] = await sql<DiscoverySeedRow>(
    em,
    `select id, account_id, name, source_platform from read.gofers
      where id = ? and deleted_at is null and (? or discovery_status = 'ready_for_pairing')`,
    [goferId, anyStatus],
  );
  return row;
}

/** Ready, live Gofers with fewer than `maxOpen` open threads, the least recently updated first. */
export async function discoverySeeds(em: EntityManager, maxOpen: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select g.id from read.gofers g
      where g.discovery_status = 'ready_for_pairing' and g.deleted_at is null
        and (select count(*) from read.threads th
              where (th.a_gofer_id = g.id or th.b_gofer_id = g.id) and th.status = any(${TEXT_ARRAY})) < ?
      order by g.updated_at, g.id`,
    [JSON.stringify(OPEN_THREAD_STATUSES), maxOpen],
  );
  return rows.map((r) => r.id);
}

/** One thread of a Gofer that counts against its caps: open, or proposed after `since`. */
export interface ThreadLoadRow {
  goferId: string;
  status: string;
  proposedAt: string;
}

/** The threads of `goferIds` that are open or were proposed after `since`, one row per side. */
export async function threadLoads(
  em: EntityManager,
  goferIds: string[],
  since: Date,
): Promise<ThreadLoadRow[]> {
  if (goferIds.length === 0) return [];
  const [ids, open] = [JSON.stringify(goferIds), JSON.stringify(OPEN_THREAD_STATUSES)];
  const rows = await sql<{ goferId: string; status: string; proposedAt: Date | string }>(
    em,
    `select a_gofer_id as "goferId", status, proposed_at as "proposedAt" from read.threads
      where a_gofer_id = any(${TEXT_ARRAY}) and (status = any(${TEXT_ARRAY}) or proposed_at > ?)
     union all
     select b_gofer_id, status, proposed_at from read.threads
      where b_gofer_id = any(${TEXT_ARRAY}) and (status = any(${TEXT_ARRAY}) or proposed_at > ?)`,
    [ids, open, since, ids, open, since],
  );
  return rows.map((r) => ({
    ...r,
    proposedAt: r.proposedAt instanceof Date ? r.proposedAt.toISOString() : r.proposedAt,
  }));
}
