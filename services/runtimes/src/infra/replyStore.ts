import { sql, type EntityManager } from '@oan/db';
import * as lease from '../domain/lease.ts';
import type { ReplyCall } from '../domain/reply.ts';
import { leaseOf, write, type FinishRecord, type JobRow } from './jobStore.ts';

/** The rows of a finish with a reply (ADR 0031): pending, then done or dropped. */

/** A job by its id alone, locked (a pending reply names its job, not its runtime). */
export async function lockedJob(em: EntityManager, jobId: string): Promise<JobRow | null> {
  const [row] = await sql<JobRow>(em, 'select * from runtimes.jobs where id = ? for update', [jobId]);
  return row ?? null;
}

/** Records a holder's reply as pending, with the call that carries it out (the job keeps its lease). */
export async function recordPendingReply(
  em: EntityManager,
  job: JobRow,
  f: { leaseOwner: string; version: number },
  reply: Record<string, unknown>,
  call: ReplyCall,
  now: Date,
): Promise<FinishRecord> {
  const [row] = await sql<FinishRecord>(
    em,
    `insert into runtimes.job_finishes (job_id, version, lease_owner, outcome, state, reply, call, created_at)
     values (?, ?, ?, 'handled', 'pending', ?::jsonb, ?::jsonb, ?) returning *`,
    [job.id, f.version, f.leaseOwner, JSON.stringify(reply), JSON.stringify(call), now],
  );
  return row!;
}

/** The reply was carried out: the job is handled, and the answer kept as the text it is served as. */
export async function completeReply(
  em: EntityManager,
  job: JobRow,
  version: number,
  now: Date,
  answer: (row: JobRow) => string,
): Promise<string> {
  const row = await write(em, job.id, lease.finish(leaseOf(job), 'handled', 0), now);
  const text = answer(row);
  await sql(
    em,
    `update runtimes.job_finishes set state = 'done', answer = ?::jsonb, answer_text = ?
      where job_id = ? and version = ?`,
    [text, text, job.id, version],
  );
  return text;
}

/** The owning service refused the reply: it is forgotten, and the lease goes on as it was. */
export async function dropPendingReply(em: EntityManager, jobId: string, version: number): Promise<void> {
  await sql(em, `delete from runtimes.job_finishes where job_id = ? and version = ? and state = 'pending'`, [
    jobId,
    version,
  ]);
}

/** Pending replies recorded before `before`, oldest first, with their account (for the sweep). */
export const pendingReplies = (em: EntityManager, before: Date, limit: number) =>
  sql<FinishRecord & { account_id: string; runtime_id: string }>(
    em,
    `select f.*, r.account_id, r.id as runtime_id from runtimes.job_finishes f
       join runtimes.jobs j on j.id = f.job_id join runtimes.runtimes r on r.id = j.runtime_id
      where f.state = 'pending' and f.created_at < ? order by f.created_at limit ?`,
    [before, limit],
  );
