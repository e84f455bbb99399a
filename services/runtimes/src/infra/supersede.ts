import { sql, type EntityManager } from '@oan/db';
import { settledEventIds, settledSql } from '@oan/readmodels';
import { NO_PENDING_REPLY, type JobRow } from './jobStore.ts';

/**
 * Supersession (ADR 0032): a job whose decision was settled elsewhere (the one definition of
 * "settled", `settledSql` of the read models, which the unresolved digest uses too) is closed as
 * `superseded` and never handed out again. Open jobs are the ones not finished yet: queued, leased,
 * exhausted (not handed to the owner yet) and those waiting for the owner.
 */
export const OPEN_STATES = ['queued', 'leased', 'exhausted', 'owner'] as const;
const OPEN_SQL = OPEN_STATES.map((s) => `'${s}'`).join(', ');

const CLOSE = `state = 'superseded', lease_owner = null, lease_until = null`;

/**
 * Of these jobs of one account (rows the caller holds, e.g. a claim's candidates), closes the open
 * ones whose decision is settled; returns their ids. One query for the whole batch.
 */
export async function supersedeAmong(
  em: EntityManager,
  accountId: string,
  jobs: readonly Pick<JobRow, 'id' | 'event_id' | 'state'>[],
  now: Date,
): Promise<Set<string>> {
  const open = jobs.filter((j) => (OPEN_STATES as readonly string[]).includes(j.state));
  const settled = await settledEventIds(
    em,
    accountId,
    open.map((j) => j.event_id),
  );
  const ids = open.filter((j) => settled.has(j.event_id)).map((j) => j.id);
  if (ids.length === 0) return new Set();
  await sql(
    em,
    `update runtimes.jobs set ${CLOSE}, updated_at = ?
      where id in (select jsonb_array_elements_text(?::jsonb)::uuid) and state in (${OPEN_SQL})`,
    [now, JSON.stringify(ids)],
  );
  return new Set(ids);
}

/**
 * Closes every open job of the runtime whose decision is settled (before a listing): one update over
 * the open jobs' partial index, each probing its envelope by event id. Rows a claim holds are waited
 * for, then judged again.
 */
export async function supersedeRuntime(
  em: EntityManager,
  runtime: { id: string; account_id: string },
  now: Date,
): Promise<number> {
  const rows = await sql(
    em,
    `update runtimes.jobs j set ${CLOSE}, updated_at = ?
       from read.oan_event e
      where j.runtime_id = ? and j.state in (${OPEN_SQL})
        and e.event_id = j.event_id and e.account_id = ? and ${settledSql('e')}
      returning j.id`,
    [now, runtime.id, runtime.account_id],
  );
  return rows.length;
}

/**
 * Closes the settled ones among the runtime's next `n` claimable jobs (seq order), just before a
 * claim: one short statement of its own, so the claim's transaction (whose candidates racing claims
 * skip) stays as short as before. Returns how many were closed: `n` means the next ones may be
 * settled too.
 */
export async function supersedeNextClaimable(
  em: EntityManager,
  runtime: { id: string; account_id: string },
  now: Date,
  n: number,
): Promise<number> {
  const claimable = (t: string) =>
    `(${t}.state = 'queued' or (${t}.state = 'leased' and ${t}.lease_until <= ?::timestamptz and ${NO_PENDING_REPLY(t)}))`;
  const rows = await sql(
    em,
    `update runtimes.jobs j set ${CLOSE}, updated_at = ?
       from read.oan_event e
      where j.id in (select c.id from runtimes.jobs c where c.runtime_id = ? and ${claimable('c')}
                      order by c.seq limit ?)
        and ${claimable('j')}
        and e.event_id = j.event_id and e.account_id = ? and ${settledSql('e')}
      returning j.id`,
    [now, runtime.id, now, n, now, runtime.account_id],
  );
  return rows.length;
}

/**
 * The sweep's pass over every runtime: closes at most `limit` settled open jobs, rows others hold
 * skipped (`skip locked`). Returns how many.
 */
export async function supersedeAll(em: EntityManager, now: Date, limit: number): Promise<number> {
  const rows = await sql(
    em,
    `update runtimes.jobs set ${CLOSE}, updated_at = ?
      where id in (select j.id from runtimes.jobs j
                     join runtimes.runtimes r on r.id = j.runtime_id
                     join read.oan_event e on e.event_id = j.event_id and e.account_id = r.account_id
                    where j.state in (${OPEN_SQL}) and ${settledSql('e')}
                    limit ? for update of j skip locked)
      returning id`,
    [now, limit],
  );
  return rows.length;
}
