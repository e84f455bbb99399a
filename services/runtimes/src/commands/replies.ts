import { isDeepStrictEqual } from 'node:util';
import { transaction } from '@oan/db';
import { forbidden, HttpError, validation } from '@oan/http';
import { envelopeOf } from '@oan/projection';
import { ErrorCodes } from '@oan/protocol';
import { IllegalStateError, NotFoundError, RejectedError } from '../domain/errors.ts';
import { holds } from '../domain/lease.ts';
import {
  InvalidReply,
  replyCall,
  replyCommandId,
  verdictOf,
  type EnvelopeIds,
  type ReplyCall,
} from '../domain/reply.ts';
import { finishOf, jobOf, leaseOf, type FinishRecord, type JobRow } from '../infra/jobStore.ts';
import {
  completeReply,
  dropPendingReply,
  lockedJob,
  pendingReplies,
  recordPendingReply,
} from '../infra/replyStore.ts';
import { ownRuntime } from '../infra/runtimeStore.ts';
import type { ReplyAnswer } from '../infra/replyClient.ts';
import type { RuntimesContext } from './context.ts';
import { jobSuperseded } from './jobs.ts';
import { runtimeNotFound } from './runtimes.ts';

export interface ReplyFinish {
  leaseOwner: string;
  version: number;
  reply: Record<string, unknown>;
}

/** The finish answer as text: `{job, reply: {status, body}}` with the owning service's body as it sent it. */
export type AnswerText = (job: JobRow, answer: ReplyAnswer) => string;

const leaseLost = () =>
  new IllegalStateError('LEASE_LOST', 'The lease is no longer yours (it ran out or was taken over)');
const conflict = () => new IllegalStateError('FINISH_CONFLICT', 'This lease was finished with another body');
const jobNotFound = () => new NotFoundError('JOB_NOT_FOUND', 'Job not found');

/**
 * `handled` with a `reply` (ADR 0031): the reply is recorded pending under the lease, carried out
 * through the owning service under a command id of (job, version), then the job is handled and the
 * answer kept. The same body again completes a pending one or answers the kept text; a crash between
 * the steps is completed by the same body again or by the sweep, and the owning service's command id
 * makes the second send append nothing. `may` is the caller's API-key permission check.
 */
export async function finishWithReply(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  jobId: string,
  f: ReplyFinish,
  may: (permission: ReplyCall['permission']) => boolean,
  answer: AnswerText,
): Promise<string> {
  const replies = ctx.replies;
  const recorded = await transaction(ctx.orm, async (em) => {
    const runtime = await ownRuntime(em, accountId, runtimeId);
    if (!runtime) throw runtimeNotFound();
    const job = await jobOf(em, runtime.id, jobId, true);
    if (!job) throw jobNotFound();
    const done = await finishOf(em, job.id, f.version);
    if (done) {
      const same =
        done.lease_owner === f.leaseOwner &&
        done.outcome === 'handled' &&
        done.reply !== null &&
        isDeepStrictEqual(done.reply, f.reply);
      if (!same) throw conflict();
      return done;
    }
    if (job.state === 'superseded') throw jobSuperseded();
    if (!holds(leaseOf(job), f.leaseOwner, f.version, ctx.now())) throw leaseLost();
    const envelope = await envelopeOf(em, accountId, job.event_id);
    if (envelope === null) throw new Error(`job ${job.id}: envelope ${job.event_id} is missing`);
    let call: ReplyCall;
    try {
      call = replyCall(JSON.parse(envelope) as EnvelopeIds, f.reply);
    } catch (err) {
      if (err instanceof InvalidReply) throw validation(err.message);
      throw err;
    }
    if (!may(call.permission)) throw forbidden(`Forbidden: API key lacks permission ${call.permission}`);
    if (!replies?.serves(call.service))
      throw new RejectedError('OUTCOME_NOT_SUPPORTED', `Replies through ${call.service} are not configured`);
    return recordPendingReply(em, job, f, f.reply, call, ctx.now());
  });
  if (recorded.state === 'done') return recorded.answer_text ?? JSON.stringify(recorded.answer);
  return carryOut(ctx, accountId, recorded, answer);
}

/**
 * Sends a pending reply (again: the command id makes that safe) and ends it by the owning service's
 * answer: done (the job handled, the answer kept), refused (the pending reply dropped, the lease
 * unchanged, its `{error, code}` passed on), or not known yet (kept pending, 503).
 */
export async function carryOut(
  ctx: RuntimesContext,
  accountId: string,
  pending: FinishRecord,
  answer: AnswerText,
): Promise<string> {
  const call = pending.call;
  if (!call || !ctx.replies) throw new Error(`finish ${pending.job_id}/${pending.version} has no call`);
  let sent: ReplyAnswer;
  try {
    sent = await ctx.replies.send(call, accountId, replyCommandId(pending.job_id, pending.version));
  } catch {
    throw stillPending();
  }
  const verdict = verdictOf(sent.status);
  if (verdict === 'retry') throw stillPending();
  const text = await transaction(ctx.orm, async (em) => {
    const job = await lockedJob(em, pending.job_id);
    const now = await finishOf(em, pending.job_id, pending.version);
    if (!job || !now) throw jobNotFound(); // the runtime was deleted meanwhile
    if (now.state === 'done') return now.answer_text ?? JSON.stringify(now.answer);
    if (verdict === 'refused') {
      await dropPendingReply(em, pending.job_id, pending.version);
      return null;
    }
    return completeReply(em, job, pending.version, ctx.now(), (row) => answer(row, sent));
  });
  ctx.waiters.wake(accountId);
  if (text === null) throw refusedBy(sent);
  return text;
}

const stillPending = () =>
  new HttpError(
    503,
    ErrorCodes.unavailable,
    'The reply is recorded but not carried out yet: finish again with the same body',
  );

/** The owning service's own refusal, as it gave it. */
function refusedBy(sent: ReplyAnswer): HttpError {
  try {
    const body = JSON.parse(sent.text) as { error?: unknown; code?: unknown };
    if (typeof body.error === 'string' && typeof body.code === 'string')
      return new HttpError(sent.status, body.code, body.error);
  } catch {
    // not JSON: answered below
  }
  return new HttpError(sent.status, ErrorCodes.badRequest, 'The reply was refused');
}

/**
 * Completes the replies left pending before `before` (a process that died between the owning
 * service's answer and the record, or a service that was down): at start and then periodically.
 * Returns how many it ended; a reply still not carried out stays pending for the next round.
 */
export async function sweepPendingReplies(
  ctx: RuntimesContext,
  before: Date,
  answer: AnswerText,
  onError: (err: unknown, pending: FinishRecord) => void,
): Promise<number> {
  const rows = await pendingReplies(ctx.orm.em.fork(), before, 100);
  let ended = 0;
  for (const row of rows) {
    try {
      await carryOut(ctx, row.account_id, row, answer);
      ended++;
    } catch (err) {
      // a refusal ended it too (dropped); only "not yet" leaves it for the next round
      if (err instanceof HttpError && err.statusCode !== 503) ended++;
      else onError(err, row);
    }
  }
  return ended;
}
