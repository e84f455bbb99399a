import { validation } from '@oan/http';
import type { ReplyCall } from '../domain/reply.ts';
import type { JobRow } from '../infra/jobStore.ts';
import type { RuntimesContext } from './context.ts';
import { finishJob, type FinishInput } from './jobs.ts';
import { finishWithReply, type AnswerText } from './replies.ts';

/** A finish as a worker sends it: over REST, or in an endpoint's answer to a push. */
export interface FinishBody extends FinishInput {
  /** With `handled`: the body of the event's own reply route, carried out by the server once. */
  reply?: Record<string, unknown> | undefined;
}

/** A finish's answer: the lease's recorded answer, or the kept text of a reply carried out (ADR 0031). */
export type FinishAnswer<T> = { answer: T; text?: undefined } | { text: string };

export interface FinishViews<T> {
  answer: (row: JobRow) => T;
  answerText: AnswerText;
  /** The caller's permission for the reply's route (an API key's; the fleet's own pushes may all). */
  may: (permission: ReplyCall['permission']) => boolean;
}

/**
 * The finish route's and the dispatcher's one path from a finish body to its answer: without a
 * `reply` the lease is finished as asked; with one (only `handled`) the reply is carried out through
 * the owning service exactly once, then the job is handled.
 */
export async function finishRequest<T extends object>(
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
  jobId: string,
  body: FinishBody,
  views: FinishViews<T>,
): Promise<FinishAnswer<T>> {
  const { outcome, leaseOwner, version, reply } = body;
  if (reply === undefined) {
    return {
      answer: await finishJob(
        ctx,
        accountId,
        runtimeId,
        jobId,
        { leaseOwner, version, outcome },
        views.answer,
      ),
    };
  }
  if (outcome !== 'handled') throw validation('reply: only with outcome handled');
  const text = await finishWithReply(
    ctx,
    accountId,
    runtimeId,
    jobId,
    { leaseOwner, version, reply },
    views.may,
    views.answerText,
  );
  return { text };
}
