import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { AuthenticatedPrincipal } from '@oan/auth';
import { finishRequest } from '../commands/finish.ts';
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
  const done = await finishRequest(ctx, principal.accountId, runtimeId, jobId, body, {
    answer: (row) => ({ job: jobView(row) }),
    answerText: replyAnswerText,
    may: keyMay(principal),
  });
  if (done.text === undefined) return done.answer;
  // kept text, sent as it is (never re-serialized): a retry answers the same bytes
  return reply.type('application/json; charset=utf-8').send(done.text) as unknown as s.FinishAnswer;
}
