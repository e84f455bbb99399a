import { notBanned } from '@oan/auth';
import { sql, type EntityManager } from '@oan/db';
import { oanEventSql } from '@oan/projection';
import type { Health } from '../domain/health.ts';
import type { RuntimeRow } from '../infra/runtimeStore.ts';

/** The failures of an endpoint the owner can read (`health.recentFailures`); older ones are deleted. */
export const KEPT_FAILURES = 10;

export interface FailureRow {
  runtime_id: string;
  kind: 'verification' | 'dispatch';
  job_id: string | null;
  status_code: number | null;
  error: string;
  at: Date;
}

/**
 * Endpoint runtimes that are pushed to and have something to push: an envelope not read yet, or a
 * job that is queued (and past its `dispatch_after`) or whose lease ran out. A banned account's are
 * never due: a ban stops every push at once, as it stops webhook deliveries.
 */
export const dueRuntimes = (em: EntityManager, now: Date, limit: number) =>
  sql<RuntimeRow>(
    em,
    `select r.* from runtimes.runtimes r
     where r.endpoint_state in ('active', 'unhealthy') and ${notBanned('r.account_id')}
       and (${oanEventSql.hasEnvelopeAfter('r.account_id', 'r.cursor_seq')}
         or exists (select 1 from runtimes.jobs j where j.runtime_id = r.id
           and ((j.state = 'queued' and (j.dispatch_after is null or j.dispatch_after <= ?))
             or (j.state = 'leased' and j.lease_until <= ?))))
     order by r.last_seen_at nulls first limit ?`,
    [now, now, limit],
  );

/** The accounts with a pushed endpoint runtime: the only ones whose new envelopes are worth a sweep. */
export async function endpointAccounts(em: EntityManager): Promise<string[]> {
  const rows = await sql<{ account_id: string }>(
    em,
    `select distinct account_id from runtimes.runtimes where endpoint_state in ('active', 'unhealthy')`,
    [],
  );
  return rows.map((r) => r.account_id);
}

/**
 * Moves an endpoint's health under the runtime's row lock, so replicas recording at once count
 * every result; a failure is kept for the owner to read. Null when the runtime is gone.
 */
export async function recordHealth(
  em: EntityManager,
  runtimeId: string,
  change: (h: Health) => Health,
  o: { at: Date; seen: boolean; verified?: boolean; failure?: Omit<FailureRow, 'runtime_id' | 'at'> },
): Promise<RuntimeRow | null> {
  const [current] = await sql<RuntimeRow>(
    em,
    'select * from runtimes.runtimes where id = ? and endpoint is not null for update',
    [runtimeId],
  );
  if (!current?.endpoint_state) return null;
  const next = change({ state: current.endpoint_state, consecutiveFailures: current.consecutive_failures });
  const [row] = await sql<RuntimeRow>(
    em,
    `update runtimes.runtimes set endpoint_state = ?, consecutive_failures = ?,
       last_seen_at = ${o.seen ? '?' : 'last_seen_at'}, verified_at = ${o.verified ? '?' : 'verified_at'}
     where id = ? returning *`,
    [
      next.state,
      next.consecutiveFailures,
      ...(o.seen ? [o.at] : []),
      ...(o.verified ? [o.at] : []),
      runtimeId,
    ],
  );
  if (o.failure) {
    const f = o.failure;
    await sql(
      em,
      `insert into runtimes.endpoint_failures (runtime_id, kind, job_id, status_code, error, at)
       values (?, ?, ?, ?, ?, ?)`,
      [runtimeId, f.kind, f.job_id, f.status_code, f.error.slice(0, 500), o.at],
    );
    await sql(
      em,
      `delete from runtimes.endpoint_failures where runtime_id = ? and id < (
         select id from runtimes.endpoint_failures where runtime_id = ? order by id desc offset ? limit 1)`,
      [runtimeId, runtimeId, KEPT_FAILURES - 1],
    );
  }
  return row ?? null;
}

/** The recent failures of these runtimes, newest first. */
export const failuresOf = (em: EntityManager, runtimeIds: string[]) =>
  runtimeIds.length === 0
    ? Promise.resolve([])
    : sql<FailureRow>(
        em,
        `select runtime_id, kind, job_id, status_code, error, at from runtimes.endpoint_failures
         where runtime_id in (select jsonb_array_elements_text(?::jsonb)::uuid) order by id desc`,
        [JSON.stringify(runtimeIds)],
      );

/**
 * A job about to be given back by its endpoint waits before it is pushed again; written under the
 * lease (only while this version holds it), before the finish makes it claimable.
 */
export async function deferJob(
  em: EntityManager,
  jobId: string,
  version: number,
  until: Date,
): Promise<void> {
  await sql(
    em,
    `update runtimes.jobs set dispatch_after = ? where id = ? and version = ? and state = 'leased'`,
    [until, jobId, version],
  );
}
