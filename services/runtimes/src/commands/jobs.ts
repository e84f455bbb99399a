import { bannedAmong } from '@oan/auth';
import { transaction, type EntityManager } from '@oan/db';
import { envelopeOf } from '@oan/projection';
import { IllegalStateError, NotFoundError } from '../domain/errors.ts';
import { holds, type FinishOutcome } from '../domain/lease.ts';
import {
  claimNext,
  finishOf,
  heartbeat as extendLease,
  ingest,
  jobOf,
  leaseOf,
  recordFinish,
  type JobRow,
} from '../infra/jobStore.ts';
import { hasUnread, ownRuntime, touchWorker, type RuntimeRow } from '../infra/runtimeStore.ts';
import { supersedeAmong, supersedeNextClaimable } from '../infra/supersede.ts';
import type { RuntimesContext } from './context.ts';
import { runtimeNotFound } from './runtimes.ts';

const leaseLost = () =>
  new IllegalStateError('LEASE_LOST', 'The lease is no longer yours (it ran out or was taken over)');

/** ADR 0032: the decision was settled elsewhere (perhaps by this worker's own answer); nothing to do. */
export const jobSuperseded = () =>
  new IllegalStateError(
    'JOB_SUPERSEDED',
    'The decision of this job was settled elsewhere; it is closed and needs nothing more',
  );

async function runtimeOf(em: EntityManager, accountId: string, id: string, lock = false) {
  const row = await ownRuntime(em, accountId, id, lock);
  if (!row) throw runtimeNotFound();
  return row;
}

/** Turns the account's envelopes the runtime has not read yet into jobs (a short transaction). */
export async function catchUp(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
): Promise<RuntimeRow> {
  const em = ctx.orm.em.fork();
  const row = await runtimeOf(em, accountId, runtimeId);
  if (!(await hasUnread(em, runtimeId))) return row;
  return transaction(ctx.orm, async (tx) => {
    const locked = await runtimeOf(tx, accountId, runtimeId, true);
    await ingest(tx, locked, ctx.now());
    return locked;
  });
}

export interface Claimed {
  job: JobRow;
  /** The stored envelope text, exactly as `GET /events` serves it. */
  envelope: string;
}

/** One claim attempt: new envelopes first, then the first claimable job, or null. */
export async function claimOnce(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  worker: string,
): Promise<Claimed | null> {
  const runtime = await catchUp(ctx, accountId, runtimeId);
  if (runtime.endpoint !== null) {
    throw new IllegalStateError(
      'RUNTIME_HAS_ENDPOINT',
      'The jobs of this runtime are pushed to its endpoint; they cannot be claimed',
    );
  }
  return claimFor(ctx, runtime, worker);
}

/**
 * Claims the runtime's next job for `worker` (a REST worker, or the dispatcher for an endpoint). A
 * banned account's jobs are handed to no one: the ban reaches a claim held from before it, and a
 * push the dispatcher was about to make.
 */
export async function claimFor(
  ctx: RuntimesContext,
  runtime: RuntimeRow,
  worker: string,
  opts: { due?: boolean } = {},
): Promise<Claimed | null> {
  const accountId = runtime.account_id;
  // a claim, even one that finds nothing, shows the runtime has a live worker (ADR 0032)
  await touchWorker(ctx.orm.em.fork(), runtime.id, ctx.now());
  // decisions settled elsewhere are closed before one is handed out (a page at a time)
  for (let i = 0; i < 20; i++) {
    if ((await supersedeNextClaimable(ctx.orm.em.fork(), runtime, ctx.now(), 10)) < 10) break;
  }
  return transaction(ctx.orm, async (em) => {
    // as close to the hand-out as it can be: a ban committed before this statement hands out nothing
    if ((await bannedAmong(em, [accountId])).size > 0) return null;
    const job = await claimNext(em, runtime, worker, ctx.now(), opts);
    if (!job) return null;
    const envelope = await envelopeOf(em, accountId, job.event_id);
    // the event table is only ever appended to: a job always has its envelope.
    if (envelope === null) throw new Error(`job ${job.id}: envelope ${job.event_id} is missing`);
    return { job, envelope };
  });
}

export interface HeartbeatInput {
  leaseOwner: string;
  version: number;
  progress?: { percent?: number; note?: string } | undefined;
}

export async function heartbeatJob(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  jobId: string,
  h: HeartbeatInput,
): Promise<JobRow> {
  const result = await transaction(ctx.orm, async (em) => {
    const runtime = await runtimeOf(em, accountId, runtimeId);
    const job = await jobOf(em, runtime.id, jobId, true);
    if (!job) throw new NotFoundError('JOB_NOT_FOUND', 'Job not found');
    if (job.state === 'superseded') throw jobSuperseded();
    const now = ctx.now();
    if (!holds(leaseOf(job), h.leaseOwner, h.version, now)) throw leaseLost();
    // the holder learns at its next heartbeat that the decision was settled meanwhile; the close is
    // committed, so the answer is a value here and the refusal is thrown after the commit
    if ((await supersedeAmong(em, accountId, [job], now)).size > 0) return 'superseded' as const;
    return (await extendLease(em, job, h, runtime.policy.leaseSeconds, now))!;
  });
  if (result === 'superseded') throw jobSuperseded();
  // after the commit: the runtime's row is never locked while a job's is (configure locks them the other way)
  await touchWorker(ctx.orm.em.fork(), result.runtime_id, ctx.now());
  return result;
}

const SUPERSEDED = Symbol('superseded');

export interface FinishInput {
  leaseOwner: string;
  version: number;
  outcome: FinishOutcome;
}

/**
 * Finishes the holder's lease once. The answer is recorded under (job, version): the same body again
 * answers it again, another body for that lease is a conflict, and anyone else is fenced.
 */
export async function finishJob<T extends object>(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  jobId: string,
  f: FinishInput,
  answer: (row: JobRow) => T,
): Promise<T> {
  const result = await transaction(ctx.orm, async (em) => {
    const runtime = await runtimeOf(em, accountId, runtimeId);
    const job = await jobOf(em, runtime.id, jobId, true);
    if (!job) throw new NotFoundError('JOB_NOT_FOUND', 'Job not found');
    const done = await finishOf(em, job.id, f.version);
    if (done) {
      // a finish that carried a reply (recorded or pending) is another body
      const same = done.lease_owner === f.leaseOwner && done.outcome === f.outcome && done.reply === null;
      if (same) return done.answer as T;
      throw new IllegalStateError('FINISH_CONFLICT', 'This lease was finished with another body');
    }
    if (job.state === 'superseded') throw jobSuperseded();
    const now = ctx.now();
    if (!holds(leaseOf(job), f.leaseOwner, f.version, now)) throw leaseLost();
    // a decision settled meanwhile is not given back (released, failed): the job closes instead, and
    // the refusal is thrown after the commit (ADR 0032); `handled` is the holder's own word
    if (f.outcome !== 'handled' && (await supersedeAmong(em, accountId, [job], now)).size > 0)
      return SUPERSEDED;
    return recordFinish(em, job, f, runtime.policy.maxAttempts, now, answer);
  });
  if (result === SUPERSEDED) throw jobSuperseded();
  // a job given back may be claimed at once by a claim held here, or by a worker told over its socket.
  ctx.waiters.wake(accountId);
  if (f.outcome !== 'handled') ctx.givenBack?.(accountId, runtimeId);
  return result;
}
