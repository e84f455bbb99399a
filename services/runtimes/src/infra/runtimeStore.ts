import { sql, TEXT_ARRAY, type EntityManager } from '@oan/db';
import { oanEventSql } from '@oan/projection';
import type { EndpointState } from '../domain/health.ts';
import type { Policy } from '../domain/policy.ts';

export interface RuntimeRow {
  id: string;
  account_id: string;
  name: string;
  policy: Policy;
  version: number;
  cursor_seq: string;
  created_at: Date;
  /** Set for a runtime whose jobs are pushed (ADR 0033); null for one whose workers claim. */
  endpoint: string | null;
  /** The endpoint's signing secret: never logged, never shown after the create answer. */
  secret: string | null;
  endpoint_state: EndpointState | null;
  consecutive_failures: number;
  last_seen_at: Date | null;
  verified_at: Date | null;
  /** The last claim or heartbeat of any of its workers; null until the first. */
  worker_seen_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every runtime statement of one account runs after this lock: the count and the name stay true. */
const lockAccount = (em: EntityManager, accountId: string) =>
  sql(em, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`runtimes:${accountId}`]);

export type CreateResult = { kind: 'created' | 'existing'; row: RuntimeRow } | { kind: 'limit' };

/**
 * The account's runtime of that name, or a new one unless it has `max`. A new runtime's cursor is
 * the account's last envelope: its jobs are the decisions after its registration.
 */
export async function createRuntime(
  em: EntityManager,
  r: {
    id: string;
    accountId: string;
    name: string;
    policy: Policy;
    now: Date;
    endpoint?: { url: string; secret: string } | undefined;
  },
  max: number,
): Promise<CreateResult> {
  await lockAccount(em, r.accountId);
  const [existing] = await sql<RuntimeRow>(
    em,
    'select * from runtimes.runtimes where account_id = ? and name = ?',
    [r.accountId, r.name],
  );
  if (existing) return { kind: 'existing', row: existing };
  const [count] = await sql<{ n: number }>(
    em,
    'select count(*)::int as n from runtimes.runtimes where account_id = ?',
    [r.accountId],
  );
  if ((count?.n ?? 0) >= max) return { kind: 'limit' };
  const [row] = await sql<RuntimeRow>(
    em,
    `insert into runtimes.runtimes (id, account_id, name, policy, version, cursor_seq, created_at,
       endpoint, secret, endpoint_state)
     values (?, ?, ?, ?::jsonb, 1, ${oanEventSql.lastSeqOf('?')}, ?, ?, ?, ?) returning *`,
    [
      r.id,
      r.accountId,
      r.name,
      JSON.stringify(r.policy),
      r.accountId,
      r.now,
      r.endpoint?.url ?? null,
      r.endpoint?.secret ?? null,
      r.endpoint ? 'unverified' : null,
    ],
  );
  return { kind: 'created', row: row! };
}

export const listRuntimes = (em: EntityManager, accountId: string) =>
  sql<RuntimeRow>(em, 'select * from runtimes.runtimes where account_id = ? order by created_at, id', [
    accountId,
  ]);

/** The runtimes of several accounts in one statement, each account's in `listRuntimes`'s order. */
export async function listRuntimesOf(
  em: EntityManager,
  accountIds: readonly string[],
): Promise<Map<string, RuntimeRow[]>> {
  const rows = await sql<RuntimeRow>(
    em,
    `select * from runtimes.runtimes where account_id = any(${TEXT_ARRAY}) order by created_at, id`,
    [JSON.stringify(accountIds)],
  );
  const out = new Map<string, RuntimeRow[]>(accountIds.map((a) => [a, []]));
  for (const r of rows) out.get(r.account_id)?.push(r);
  return out;
}

/**
 * The account's runtime, or null for an unknown, foreign or malformed id (one answer). `lock`
 * takes the row for the transaction (configure, and the reading of new envelopes).
 */
export async function ownRuntime(
  em: EntityManager,
  accountId: string,
  id: string,
  lock = false,
): Promise<RuntimeRow | null> {
  if (!UUID.test(id)) return null;
  const [row] = await sql<RuntimeRow>(
    em,
    `select * from runtimes.runtimes where id = ? and account_id = ?${lock ? ' for update' : ''}`,
    [id, accountId],
  );
  return row ?? null;
}

export async function deleteRuntime(em: EntityManager, accountId: string, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  await lockAccount(em, accountId);
  const rows = await sql(em, 'delete from runtimes.runtimes where id = ? and account_id = ? returning id', [
    id,
    accountId,
  ]);
  return rows.length > 0;
}

export async function updatePolicy(em: EntityManager, id: string, policy: Policy): Promise<RuntimeRow> {
  const [row] = await sql<RuntimeRow>(
    em,
    'update runtimes.runtimes set policy = ?::jsonb, version = version + 1 where id = ? returning *',
    [JSON.stringify(policy), id],
  );
  return row!;
}

export async function advanceCursor(em: EntityManager, id: string, seq: string): Promise<void> {
  await sql(em, 'update runtimes.runtimes set cursor_seq = greatest(cursor_seq, ?::bigint) where id = ?', [
    seq,
    id,
  ]);
}

/** Whether the account has an envelope the runtime has not read yet (no lock: a cheap first look). */
export async function hasUnread(em: EntityManager, runtimeId: string): Promise<boolean> {
  const [row] = await sql<{ unread: boolean }>(
    em,
    `select ${oanEventSql.hasEnvelopeAfter('r.account_id', 'r.cursor_seq')} as unread
       from runtimes.runtimes r where r.id = ?`,
    [runtimeId],
  );
  return row?.unread ?? false;
}

/**
 * Records that a worker of the runtime is alive (a claim or a heartbeat). At most one write a second
 * per runtime, in a statement of its own, so racing claims do not queue on the runtime's row.
 */
export async function touchWorker(em: EntityManager, id: string, now: Date): Promise<void> {
  await sql(
    em,
    `update runtimes.runtimes set worker_seen_at = ?
      where id = ? and (worker_seen_at is null or worker_seen_at < ?::timestamptz - interval '1 second')`,
    [now, id, now],
  );
}
