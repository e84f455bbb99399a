import type { GoferEvent } from '@oan/domain';
import { goferDecider } from '../domain/gofer.ts';
import type { BrainInput, HistoryItem } from './types.ts';

export type PreparedInput =
  | { kind: 'reply'; accountId: string; input: BrainInput }
  | { kind: 'skip'; reason: 'unknown' | 'deleted' | 'answered' | 'not_a_user_message' };

/**
 * The brain's view of one user message, from the Gofer's own stream (the write side, so it never
 * lags behind a projector and a redelivery sees what the first delivery saw, plus earlier replies).
 * History is the chat in stream order without this message and without user messages posted after
 * it: those get their own turn, in order (one partition per account).
 */
export function buildBrainInput(events: readonly GoferEvent[], messageId: string): PreparedInput {
  // Folded along the way: a user message that changed the open caller questions answered one.
  const ownerAnswers = new Set<string>();
  let state = goferDecider.initialState();
  for (const e of events) {
    const before = state;
    state = goferDecider.evolve(state, e);
    if (e.type === 'ChatMessageAdded' && e.data.role === 'user' && state.status !== 'none') {
      if (before.status !== 'none' && state.callerQuestions !== before.callerQuestions) {
        ownerAnswers.add(e.data.messageId);
      }
    }
  }
  if (state.status === 'none') return { kind: 'skip', reason: 'unknown' };
  // A deleted Gofer gets no further events (the ones already logged stay replayable).
  if (state.status === 'deleted') return { kind: 'skip', reason: 'deleted' };
  if (state.answered.has(messageId)) return { kind: 'skip', reason: 'answered' };

  let message: { messageId: string; content: string } | null = null;
  const history: HistoryItem[] = [];
  const knowledge = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'AttachmentRagStatusChanged') {
      // The latest status wins; only parsed documents (ragStatus ready) are knowledge.
      const { attachmentId, ragStatus, knowledge: text } = e.data;
      if (ragStatus === 'ready' && text) knowledge.set(attachmentId, text);
      else knowledge.delete(attachmentId);
    }
    if (e.type !== 'ChatMessageAdded') continue;
    const d = e.data;
    if (d.messageId === messageId) {
      if (d.role !== 'user') return { kind: 'skip', reason: 'not_a_user_message' };
      message = { messageId, content: d.content };
    } else if (!(message && d.role === 'user')) {
      // ADR 0036: the owner's answer to a caller's question is marked, so no interview reads it.
      const kind = ownerAnswers.has(d.messageId) ? 'owner_answer' : d.kind;
      history.push({ role: d.role, content: d.content, pendingQuery: d.pendingQuery, kind });
    }
  }
  if (!message) return { kind: 'skip', reason: 'unknown' };
  return {
    kind: 'reply',
    accountId: state.accountId,
    input: {
      gofer: {
        goferId: state.goferId,
        locale: state.locale,
        name: state.name,
        description: state.description,
        values: [...state.values],
        demands: [...state.demands],
        humanReviewTriggers: [...state.humanReviewTriggers],
        discoveryStatus: state.discoveryStatus,
      },
      history,
      message,
      knowledge: [...knowledge.values()],
    },
  };
}
