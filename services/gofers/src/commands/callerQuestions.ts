import { goferStreamId } from '@oan/domain';
import type { CallerChannel } from '../domain/callerQuestions.ts';
import { NotFoundError } from '../domain/errors.ts';
import { goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

export interface AskOwnerInput {
  goferId: string;
  channel: CallerChannel;
  /** The caller's id on its channel (an A2A caller identity, a relay address). */
  caller: string;
  /** The caller's words: quoted in the owner's row as a stranger's, never followed. */
  callerText: string;
  /** The brain's question for the owner (`CallerOutput.askOwner`). */
  question: string;
  /** What the caller's side waits on; handed back with the answer. */
  taskId: string;
  /** A stable id makes a retry append nothing; fresh by default. */
  messageId?: string;
}

export interface AskOwnerResult {
  /** The role-chat row that asks (or will ask) the owner: `questionMessageId` of the answer. */
  messageId: string;
  /** false: another caller question is open; this one is asked when the ones before are answered. */
  askedNow: boolean;
}

/**
 * ADR 0036: the Gofer asks its owner for a caller. Throws `GOFER_NOT_FOUND` for an unknown or
 * deleted Gofer and `OWNER_QUESTIONS_FULL` past the open questions a Gofer keeps.
 */
export async function askOwnerForCaller(ctx: GoferContext, input: AskOwnerInput): Promise<AskOwnerResult> {
  if (!plausibleGoferId(input.goferId)) throw new NotFoundError('GOFER_NOT_FOUND', 'Gofer not found');
  const messageId = input.messageId ?? ctx.ids();
  const { state } = await goferCommands(ctx)(goferStreamId(input.goferId), {
    type: 'AskOwnerForCaller',
    data: {
      messageId,
      channel: input.channel,
      caller: input.caller,
      callerText: input.callerText,
      question: input.question,
      taskId: input.taskId,
    },
  });
  const question =
    state.status === 'none' ? undefined : state.callerQuestions.find((q) => q.messageId === messageId);
  // A repeat of a question answered meanwhile is no longer open: it was asked.
  return { messageId, askedNow: question?.asked ?? true };
}

/** ADR 0036: records that the owner's answer was handed on (once; a repeat appends nothing). */
export async function recordOwnerAnswer(
  ctx: GoferContext,
  input: { goferId: string; questionMessageId: string; delivered: boolean },
): Promise<{ recorded: boolean }> {
  const { appended } = await goferCommands(ctx)(goferStreamId(input.goferId), {
    type: 'RecordOwnerAnswer',
    data: { questionMessageId: input.questionMessageId, delivered: input.delivered, ackMessageId: ctx.ids() },
  });
  return { recorded: appended.length > 0 };
}

/**
 * ADR 0036: the caller stopped waiting (its task was canceled or ended) before the owner answered.
 * `withdrawn: false` when there was nothing to withdraw: unknown, already answered (the port will
 * be told and may answer `delivered: false`) or already withdrawn.
 */
export async function withdrawCallerQuestion(
  ctx: GoferContext,
  input: { goferId: string; questionMessageId: string },
): Promise<{ withdrawn: boolean }> {
  if (!plausibleGoferId(input.goferId)) return { withdrawn: false };
  const { appended } = await goferCommands(ctx)(goferStreamId(input.goferId), {
    type: 'WithdrawCallerQuestion',
    data: { questionMessageId: input.questionMessageId, noteMessageId: ctx.ids() },
  });
  return { withdrawn: appended.length > 0 };
}
