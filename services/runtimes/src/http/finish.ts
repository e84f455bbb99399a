import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { AuthenticatedPrincipal } from '@oan/auth';
import { validation } from '@oan/http';
import { finishJob } from '../commands/jobs.ts';
import { finishWithReply } from '../commands/replies.ts';
import type { RuntimesContext } from '../commands/context.ts';
import type * as s from './schemas.ts';
import { jobView, keyMay, replyAnswerText } from './views.ts';

/**
 * `POST /runtimes/{id}/jobs/{jobId}/finish`: a lease finished by its holder, or, with a `reply`, the
 * server carrying out the answer first (ADR 0031).
 */
export async function finish(
  ctx: RuntimesContext,
  principal: AuthenticatedPrincipal,
  { runtimeId, jobId }: z.infer<typeof s.jobParams>,
  body: z.infer<typeof s.finishBody>,
  reply: FastifyReply,
): Promise<s.FinishAnswer> {
  const { outcome, leaseOwner, version, reply: replyBody } = body;
  if (replyBody === undefined) {
    return finishJob(ctx, principal.accountId, runtimeId, jobId, { leaseOwner, version, outcome }, (row) => ({
      job: jobView(row),
    }));
  }
  if (outcome !== 'handled') throw validation('reply: only with outcome handled');
  const text = await finishWithReply(
    ctx,
    principal.accountId,
    runtimeId,
    jobId,
    { leaseOwner, version, reply: replyBody },
    keyMay(principal),
    replyAnswerText,
  );
  // kept text, sent as it is (never re-serialized): a retry answers the same bytes
  return reply.type('application/json; charset=utf-8').send(text) as unknown as s.FinishAnswer;
}
