import type { CallerOutput } from '../brain/types.ts';
import { askOwnerForCaller } from '../commands/callerQuestions.ts';
import type { GoferContext } from '../commands/context.ts';
import { RejectedError } from '../domain/errors.ts';
import { placeholderTexts } from '../domain/goferTexts.ts';
import { waitingOwnerAnswers } from '../infra/relayOwnerAnswers.ts';
import type { CallerTurn } from './agent.ts';

/**
 * ADR 0036, on the relay: what the Gofer says to a caller, and the owner's answers it hands on. The
 * owner's answers to this caller's earlier questions come first (the relay cannot call a caller
 * back: they wait for its next turn). When the brain set `askOwner`, the owner is asked and the
 * brain's holding line stands (the caller's address is the question's task: its answer waits for
 * that address); a Gofer with too many open questions says so instead. `handed` are the answers to
 * mark told once the turn is recorded.
 */
export async function relayReply(
  ctx: GoferContext,
  r: { goferId: string; locale: string; turn: CallerTurn; out: CallerOutput },
): Promise<{ content: string; handed: string[] }> {
  const texts = placeholderTexts(r.locale);
  const waiting = await waitingOwnerAnswers(ctx.orm.em.fork(), r.goferId, r.turn.caller);
  let reply = r.out.content;
  if (r.out.askOwner) {
    try {
      await askOwnerForCaller(ctx, {
        goferId: r.goferId,
        channel: 'relay',
        caller: r.turn.caller,
        callerText: r.turn.prompt,
        question: r.out.askOwner,
        taskId: r.turn.caller,
      });
    } catch (err) {
      if (!(err instanceof RejectedError && err.code === 'OWNER_QUESTIONS_FULL')) throw err;
      reply = texts.ownerBusy;
    }
  }
  return {
    content: [...waiting.map((w) => texts.relayOwnerAnswer(w.answer)), reply].join('\n\n'),
    handed: waiting.map((w) => w.questionMessageId),
  };
}
