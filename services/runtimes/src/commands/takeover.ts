import { sql, transaction } from '@oan/db';
import type { JobState } from '../domain/lease.ts';
import { listJobs, type JobRow } from '../infra/jobStore.ts';
import { supersedeRuntime } from '../infra/supersede.ts';
import { settledSql } from '@oan/readmodels';
import type { RuntimesContext } from './context.ts';
import { catchUp } from './jobs.ts';

/**
 * A runtime's jobs for a listing: its new envelopes read first, then its open jobs whose decision was
 * settled elsewhere closed as `superseded` (ADR 0032), so the list never shows a settled job as open.
 */
export async function listRuntimeJobs(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  q: { state?: JobState | undefined; after: string; limit: number },
): Promise<JobRow[]> {
  const runtime = await catchUp(ctx, accountId, runtimeId);
  await transaction(ctx.orm, (em) => supersedeRuntime(em, runtime, ctx.now()));
  return listJobs(ctx.orm.em.fork(), runtime.id, q);
}

export type WaitingRow = JobRow & { runtime_name: string; envelope: string };

/**
 * The account's jobs handed to the owner ("Waiting for you"), oldest decision first, with their
 * runtime and envelope; those answered by hand meanwhile are closed as `superseded` first.
 */
export async function waitingForOwner(ctx: RuntimesContext, accountId: string): Promise<WaitingRow[]> {
  const now = ctx.now();
  await transaction(ctx.orm, (em) =>
    sql(
      em,
      `update runtimes.jobs j set state = 'superseded', updated_at = ?
         from runtimes.runtimes r, read.oan_event e
        where r.account_id = ? and j.runtime_id = r.id and j.state = 'owner'
          and e.event_id = j.event_id and e.account_id = r.account_id and ${settledSql('e')}`,
      [now, accountId],
    ),
  );
  return sql<WaitingRow>(
    ctx.orm.em.fork(),
    `select j.*, r.name as runtime_name, e.envelope
       from runtimes.jobs j
       join runtimes.runtimes r on r.id = j.runtime_id
       join read.oan_event e on e.event_id = j.event_id and e.account_id = r.account_id
      where r.account_id = ? and j.state = 'owner'
      order by j.seq, r.name limit 200`,
    [accountId],
  );
}
