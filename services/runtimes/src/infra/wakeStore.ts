import { sql, type EntityManager } from '@oan/db';

/** Jobs of the runtime a claim would hand out now: queued, or leased with the lease run out. */
export async function claimableCount(em: EntityManager, runtimeId: string, now: Date): Promise<number> {
  const [row] = await sql<{ n: number }>(
    em,
    `select count(*)::int as n from runtimes.jobs
      where runtime_id = ? and (state = 'queued' or (state = 'leased' and lease_until <= ?))`,
    [runtimeId, now],
  );
  return row?.n ?? 0;
}

export interface RanOut {
  jobId: string;
  version: number;
  runtimeId: string;
  accountId: string;
}

/** Leases that ran out in (after, upTo]: their jobs are claimable again. */
export const leasesRunOut = (em: EntityManager, after: Date, upTo: Date) =>
  sql<RanOut>(
    em,
    `select j.id as "jobId", j.version, j.runtime_id as "runtimeId", r.account_id as "accountId"
       from runtimes.jobs j join runtimes.runtimes r on r.id = j.runtime_id
      where j.state = 'leased' and j.lease_until > ? and j.lease_until <= ?`,
    [after, upTo],
  );
