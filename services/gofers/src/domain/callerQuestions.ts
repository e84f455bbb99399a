import type { GoferEvent } from '@oan/domain';
import { NotFoundError, RejectedError } from './errors.ts';
import { placeholderTexts } from './goferTexts.ts';
import type { ActiveGofer, CallerQuestion, GoferState } from './goferState.ts';

/** Where a caller waits for the owner's answer. */
export type CallerChannel = 'a2a' | 'relay';

/** Open caller questions a Gofer keeps at most; past it an ask is refused (hostile callers). */
export const MAX_CALLER_QUESTIONS = 10;

export interface AskOwnerForCaller {
  /** The role-chat row that asks the owner; a retry with the same id appends nothing. */
  messageId: string;
  channel: CallerChannel;
  caller: string;
  /** The caller's words (untrusted, quoted in the row), and the brain's question for the owner. */
  callerText: string;
  question: string;
  taskId: string;
}

export interface WithdrawCallerQuestion {
  questionMessageId: string;
  /** The id of the row that tells the owner, when the question was already asked. */
  noteMessageId: string;
}

export interface RecordOwnerAnswer {
  questionMessageId: string;
  /** Whether the caller's channel took the answer (false: the caller was gone). */
  delivered: boolean;
  /** The id of the row that tells the owner what became of the answer. */
  ackMessageId: string;
}

const row = (
  state: ActiveGofer,
  m: { messageId: string; content: string; kind: string; pending: boolean; replyTo: string | null },
  now: string,
): GoferEvent => ({
  type: 'ChatMessageAdded',
  data: {
    goferId: state.goferId,
    accountId: state.accountId,
    chatId: state.chatId,
    messageId: m.messageId,
    role: 'assistant',
    content: m.content,
    attachmentIds: [],
    kind: m.kind,
    pairing: null,
    pendingQuery: m.pending,
    responseConstraints: m.pending ? JSON.stringify({ format: 'freestyle' }) : null,
    replyTo: m.replyTo,
    createdAt: now,
  },
});

const questionRow = (state: ActiveGofer, q: Pick<CallerQuestion, 'messageId' | 'content'>, now: string) =>
  row(state, { ...q, kind: 'caller_question', pending: true, replyTo: null }, now);

/**
 * ADR 0036: a caller asked what only the owner can answer. The question is recorded, and its row
 * (a pending query of kind `caller_question`, a `gofer_question` to the owner) is written now when
 * no other caller question is open, else when the ones before it are answered: the owner's next
 * message answers exactly one question. Refused for a Gofer that is not active, and past
 * `MAX_CALLER_QUESTIONS` open ones.
 */
export function askOwnerForCaller(state: GoferState, d: AskOwnerForCaller, now: string): GoferEvent[] {
  if (state.status !== 'active') throw new NotFoundError('GOFER_NOT_FOUND', 'Gofer not found');
  const known = (id: string) =>
    state.messages.some((m) => m.messageId === id) || state.callerQuestions.some((q) => q.messageId === id);
  if (known(d.messageId)) return [];
  if (state.callerQuestions.length >= MAX_CALLER_QUESTIONS) {
    throw new RejectedError('OWNER_QUESTIONS_FULL', 'Too many questions wait for the owner');
  }
  const texts = placeholderTexts(state.locale);
  const where = texts.channel[d.channel] ?? d.channel;
  const content = texts.callerQuestion(where, d.caller, d.callerText, d.question);
  const { goferId, accountId } = state;
  const { messageId, channel, caller, taskId } = d;
  const asked: GoferEvent = {
    type: 'CallerQuestionAsked',
    data: { goferId, accountId, messageId, channel, caller, taskId, content, askedAt: now },
  };
  if (state.callerQuestions.length > 0) return [asked];
  return [asked, questionRow(state, { messageId, content }, now)];
}

/**
 * ADR 0036: the owner's answer to the asked caller question was handed to the caller's channel.
 * Once per question: a question not answered yet, already recorded, or of a deleted Gofer appends
 * nothing. The owner is told what became of the answer, and the next waiting question is asked.
 */
export function recordOwnerAnswer(state: GoferState, d: RecordOwnerAnswer, now: string): GoferEvent[] {
  if (state.status !== 'active') return [];
  const q = state.callerQuestions.find((c) => c.messageId === d.questionMessageId);
  if (!q?.answer) return [];
  const texts = placeholderTexts(state.locale);
  const events: GoferEvent[] = [
    {
      type: 'CallerQuestionAnswered',
      data: {
        goferId: state.goferId,
        accountId: state.accountId,
        questionMessageId: q.messageId,
        answerMessageId: q.answer.messageId,
        channel: q.channel,
        caller: q.caller,
        taskId: q.taskId,
        delivered: d.delivered,
        answeredAt: now,
      },
    },
    row(
      state,
      {
        messageId: d.ackMessageId,
        content: texts.callerAnswer(d.delivered),
        kind: 'caller_answer',
        pending: false,
        replyTo: q.answer.messageId,
      },
      now,
    ),
  ];
  const next = state.callerQuestions.find((c) => c.messageId !== q.messageId && !c.asked);
  if (next) events.push(questionRow(state, next, now));
  return events;
}

/**
 * ADR 0036: the caller stopped waiting (its task ended) before the owner answered. A waiting
 * question leaves the queue unasked; an asked one is closed with a row that tells the owner there is
 * no need to answer, and the next waiting question is asked. A question already answered (its
 * answer is on its way: the channel says the caller is gone), unknown, or of a deleted Gofer appends
 * nothing.
 */
export function withdrawCallerQuestion(
  state: GoferState,
  d: WithdrawCallerQuestion,
  now: string,
): GoferEvent[] {
  if (state.status !== 'active') return [];
  const q = state.callerQuestions.find((c) => c.messageId === d.questionMessageId);
  if (!q || q.answer) return [];
  const events: GoferEvent[] = [
    {
      type: 'CallerQuestionWithdrawn',
      data: {
        goferId: state.goferId,
        accountId: state.accountId,
        questionMessageId: q.messageId,
        taskId: q.taskId,
        withdrawnAt: now,
      },
    },
  ];
  if (!q.asked) return events;
  const texts = placeholderTexts(state.locale);
  events.push(
    row(
      state,
      {
        messageId: d.noteMessageId,
        content: texts.callerWithdrawn,
        kind: 'caller_withdrawn',
        pending: false,
        replyTo: null,
      },
      now,
    ),
  );
  const next = state.callerQuestions.find((c) => c.messageId !== q.messageId && !c.asked);
  if (next) events.push(questionRow(state, next, now));
  return events;
}
