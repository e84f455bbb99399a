import { retryDelayMs } from '@oan/webhooks';
import { z } from 'zod';
import { transaction } from '@oan/db';
import type { RuntimesContext } from '../commands/context.ts';
import { HttpError } from '@oan/http';
import { finishRequest } from '../commands/finish.ts';
import { finishJob, type Claimed } from '../commands/jobs.ts';
import { isDomainError } from '../domain/errors.ts';
import { pushAnswered, pushFailed } from '../domain/health.ts';
import { jobText, jobView, replyAnswerText } from '../http/views.ts';
import type { JobRow } from '../infra/jobStore.ts';
import type { RuntimeRow } from '../infra/runtimeStore.ts';
import type { Endpoints } from './endpoints.ts';
import { deferJob, recordHealth, type FailureRow } from './store.ts';
import { describeAttempt } from './verify.ts';

/** The lease owner of every job pushed to an endpoint: the fleet works it on the endpoint's behalf. */
export const ENDPOINT_WORKER = 'endpoint';

/** An endpoint's answer is read up to this size (a finish body, a reply in it). */
const ANSWER_LIMIT_BYTES = 256 * 1024;
/** The request ends this long before the lease, so its finish is still the holder's. */
const LEASE_MARGIN_MS = 1000;

/** What a 2xx must carry: a finish body without the lease fields, which the fleet fills in. */
const endpointAnswer = z.object({
  outcome: z.enum(['handled', 'released', 'failed']),
  reply: z.record(z.string(), z.unknown()).optional(),
});
type EndpointAnswer = z.infer<typeof endpointAnswer>;

function parseAnswer(text: string | undefined): EndpointAnswer | null {
  try {
    const parsed = endpointAnswer.safeParse(JSON.parse(text ?? ''));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** A lease that ran out, a runtime deleted meanwhile: the job is not ours any more, nothing to do. */
const gone = (err: unknown) =>
  isDomainError(err) &&
  (err.code === 'LEASE_LOST' ||
    err.code === 'FINISH_CONFLICT' ||
    err.code === 'JOB_SUPERSEDED' ||
    err.code === 'RUNTIME_NOT_FOUND' ||
    err.code === 'JOB_NOT_FOUND');

/**
 * Pushes one claimed job to its runtime's endpoint and finishes the lease with the answer, through
 * the finish path REST workers use: a 2xx finish body is applied as the worker's own finish; no
 * answer in time, another status or another body is a failed attempt. A job given back waits
 * (backoff by its attempts) before it is pushed again; that wait is returned.
 */
export async function pushJob(
  e: Endpoints,
  ctx: RuntimesContext,
  runtime: RuntimeRow,
  c: Claimed,
): Promise<number | undefined> {
  const { job } = c;
  const sentAt = ctx.now();
  const leaseLeftMs = new Date(job.lease_until!).getTime() - sentAt.getTime() - LEASE_MARGIN_MS;
  const attempt = await e.sender.send(
    { url: runtime.endpoint!, secret: runtime.secret! },
    `${job.id}_${job.version}`,
    jobText(job, c.envelope),
    sentAt,
    { answerLimitBytes: ANSWER_LIMIT_BYTES, timeoutMs: Math.max(100, leaseLeftMs) },
  );
  const lease = { leaseOwner: ENDPOINT_WORKER, version: job.version };
  const answer = attempt.delivered ? parseAnswer(attempt.answer) : null;
  const failure = (error: string): Omit<FailureRow, 'runtime_id' | 'at'> => ({
    kind: 'dispatch',
    job_id: job.id,
    status_code: attempt.statusCode,
    error,
  });
  /** An answer with a finish body is a sign of life, whatever it asked for; anything else a failure. */
  const health = (answered: boolean, f?: Omit<FailureRow, 'runtime_id' | 'at'>) =>
    transaction(ctx.orm, (em) =>
      recordHealth(em, runtime.id, answered ? pushAnswered : (h) => pushFailed(h, e.settings.thresholds), {
        at: ctx.now(),
        seen: answered,
        ...(f ? { failure: f } : {}),
      }),
    );

  // The wait is written while the lease is still held, so no sweep can take the job back in between.
  const delayMs = retryDelayMs(Math.max(1, job.attempts), {
    ...e.settings.retry,
    giveUpMs: Number.MAX_SAFE_INTEGER,
  });
  const defer = () =>
    transaction(ctx.orm, (em) => deferJob(em, job.id, job.version, new Date(ctx.now().getTime() + delayMs)));
  const answerView = (row: JobRow) => ({ job: jobView(row) });

  let finished = false;
  let error: string | null = null;
  if (answer) {
    if (answer.outcome !== 'handled') await defer();
    try {
      // the owner set the endpoint up to answer its decisions: every reply route is the endpoint's
      await finishRequest(
        ctx,
        runtime.account_id,
        runtime.id,
        job.id,
        { ...lease, ...answer },
        {
          answer: answerView,
          answerText: replyAnswerText,
          may: () => true,
        },
      );
      finished = true;
    } catch (err) {
      if (gone(err)) return undefined;
      // recorded, not carried out yet (the owning service was unreachable): the reply sweep ends it
      if (err instanceof HttpError && err.statusCode === 503) return undefined;
      if (err instanceof HttpError) error = `reply refused: ${err.statusCode} ${err.code}: ${err.message}`;
      else if (isDomainError(err) && err.code === 'OUTCOME_NOT_SUPPORTED')
        error = `OUTCOME_NOT_SUPPORTED: ${err.message}`;
      else throw err;
    }
  } else {
    error = attempt.delivered ? 'the answer is not a finish body' : describeAttempt(attempt);
  }
  if (!finished) {
    await defer();
    try {
      await finishJob(
        ctx,
        runtime.account_id,
        runtime.id,
        job.id,
        { ...lease, outcome: 'failed' },
        answerView,
      );
    } catch (err) {
      if (!gone(err)) throw err;
    }
  }
  // Health last: whoever reads it sees the job already given back.
  await health(answer !== null, error === null ? undefined : failure(error));
  return finished && answer?.outcome === 'handled' ? undefined : delayMs;
}
