import { sql, type EntityManager } from '@oan/db';
import { addressOf, newRelayKey, type KeySealer } from '../relay/keys.ts';

/** A Gofer's row in `gofers.relay_agents` (ADR 0023). `sealedKey` opens only with KeySealer. */
export interface RelayAgentRow {
  goferId: string;
  accountId: string;
  address: string;
  sealedKey: string;
  published: boolean;
}

const COLUMNS = `gofer_id as "goferId", account_id as "accountId", address, sealed_key as "sealedKey", published`;

export async function relayAgentOf(em: EntityManager, goferId: string): Promise<RelayAgentRow | undefined> {
  const [row] = await sql<RelayAgentRow>(
    em,
    `select ${COLUMNS} from gofers.relay_agents where gofer_id = ?`,
    [goferId],
  );
  return row;
}

/**
 * The Gofer's relay key, made on its first publication and kept ever after (a Gofer keeps its
 * address when published again). Two racing first publications keep one key: the loser's insert
 * does nothing and both read the winner's row.
 */
export async function ensureRelayKey(
  em: EntityManager,
  sealer: KeySealer,
  input: { goferId: string; accountId: string; now: string },
): Promise<RelayAgentRow> {
  const existing = await relayAgentOf(em, input.goferId);
  if (existing) return existing;
  const key = newRelayKey();
  await sql(
    em,
    `insert into gofers.relay_agents (gofer_id, account_id, address, sealed_key, published, created_at, updated_at)
     values (?, ?, ?, ?, false, ?, ?) on conflict (gofer_id) do nothing`,
    [input.goferId, input.accountId, addressOf(key), sealer.seal(key, input.goferId), input.now, input.now],
  );
  return (await relayAgentOf(em, input.goferId))!;
}

/** Inline, in the transaction of the event that decides it (published, unpublished, deleted). */
export async function setRelayPublished(
  em: EntityManager,
  goferId: string,
  published: boolean,
  now: string,
): Promise<void> {
  await sql(em, 'update gofers.relay_agents set published = ?, updated_at = ? where gofer_id = ?', [
    published,
    now,
    goferId,
  ]);
}

/** Every Gofer published now: what the relay hosts of the gofers processes announce. */
export function publishedRelayAgents(em: EntityManager): Promise<RelayAgentRow[]> {
  return sql<RelayAgentRow>(
    em,
    `select ${COLUMNS} from gofers.relay_agents where published order by gofer_id`,
  );
}

/** The Gofers of one account published now (a ban takes them off the relay). */
export function publishedRelayAgentsOf(em: EntityManager, accountId: string): Promise<RelayAgentRow[]> {
  return sql<RelayAgentRow>(
    em,
    `select ${COLUMNS} from gofers.relay_agents where published and account_id = ? order by gofer_id`,
    [accountId],
  );
}
