import { normalizePlatform } from '@oan/protocol';
import {
  IllegalStateError,
  NOT_WAITING_FOR_CONFIRMATION,
  NotFoundError,
  ForbiddenError,
  RejectedError,
} from './errors.ts';
import type { Decider, PairingMode, ThreadEvent, ThreadSide, Timed } from '@oan/domain';
import { sessionTurnIdFor } from './ids.ts';
import {
  decideMatchRequest,
  requestMatch,
  type DecideMatchRequest,
  type RequestMatch,
} from './matchRequests.ts';
import { recordSummaryCard, type RecordSummaryCard } from './summaryCard.ts';
import {
  SESSION_MAX_TURNS,
  evolveThread,
  initialThreadState,
  sidesOf,
  type ExistingThread,
  type ThreadState,
} from './threadState.ts';

export type ThreadCommand =
  | { type: 'ProposePairing'; data: ProposePairing }
  | { type: 'ConfirmPairing'; data: { goferId: string; accountId: string; accepted: boolean } }
  | { type: 'CloseForDeletedGofer'; data: { goferId: string } }
  | { type: 'CloseForBannedAccount'; data: { accountId: string } }
  | { type: 'AddSessionTurn'; data: { turnIndex: number; senderGoferId: string; content: string } }
  | { type: 'EndSession'; data: Record<string, never> }
  | { type: 'RecordSummaryCard'; data: RecordSummaryCard }
  | { type: 'RequestMatch'; data: RequestMatch }
  | { type: 'DecideMatchRequest'; data: DecideMatchRequest };

/**
 * `threadId` is the pair's, chosen before the command runs (src/commands/threadIds.ts): the thread
 * the two Gofers already share, or a new id keyed by the deployment's secret.
 */
export interface ProposePairing {
  threadId: string;
  mode: PairingMode;
  sides: [ThreadSide, ThreadSide];
  score: number;
}

type Data<T extends ThreadCommand['type']> = Extract<ThreadCommand, { type: T }>['data'];

const notFound = () => new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');

/**
 * The threads group's frozen convention, not probe-safe: an unknown thread is 404, a thread the
 * caller's Gofer is not in is 403. Used by every `/threads/:id…` route and by pair/confirm.
 */
export function assertParticipant(
  state: ThreadState,
  goferId: string,
  accountId: string,
): asserts state is ExistingThread {
  if (state.status === 'none') throw notFound();
  const sides = sidesOf(state, goferId);
  if (!sides || sides.self.accountId !== accountId) throw new ForbiddenError('THREAD_FORBIDDEN', 'Forbidden');
}

/**
 * Discovery proposes a pair once: the thread id is the pair's, so a second proposal (a racing
 * discovery run, a redelivery) finds the stream and appends nothing.
 */
export function propose(state: ThreadState, d: Data<'ProposePairing'>, now: string): ThreadEvent[] {
  const [x, y] = d.sides;
  if (x.goferId === y.goferId) throw new RejectedError('SAME_GOFER', 'A Gofer cannot pair with itself');
  if (x.accountId === y.accountId)
    throw new RejectedError('SAME_ACCOUNT', 'Gofers of one account never pair');
  if (state.status !== 'none') return [];
  const [a, b] = (x.goferId < y.goferId ? [x, y] : [y, x]).map((s) => ({
    ...s,
    sourcePlatform: normalizePlatform(s.sourcePlatform),
  })) as [ThreadSide, ThreadSide];
  const { threadId } = d;
  const events: ThreadEvent[] = [
    { type: 'ThreadProposed', data: { threadId, mode: d.mode, a, b, score: d.score, proposedAt: now } },
  ];
  // Auto-pair: the thread starts active; pair_proposed is informational, without a reply.
  if (d.mode === 'auto') events.push({ type: 'ThreadActivated', data: { threadId, activatedAt: now } });
  return events;
}

/** `POST /threads/:id/pair/confirm`. */
export function confirm(state: ThreadState, d: Data<'ConfirmPairing'>, now: string): ThreadEvent[] {
  assertParticipant(state, d.goferId, d.accountId);
  // Auto-paired, already active, closed, or this side already answered ⇒ the 400 whose literal text
  // the engine treats as "already paired".
  if (state.status !== 'awaiting_confirmation' || state.confirmedBy.includes(d.goferId)) {
    throw new IllegalStateError('THREAD_NOT_AWAITING_CONFIRMATION', NOT_WAITING_FOR_CONFIRMATION);
  }
  const { threadId } = state;
  if (!d.accepted) {
    return [
      {
        type: 'ThreadClosed',
        data: { threadId, reason: 'rejected', goferId: d.goferId, accountId: d.accountId, closedAt: now },
      },
    ];
  }
  const events: ThreadEvent[] = [
    {
      type: 'PairingConfirmed',
      data: { threadId, goferId: d.goferId, accountId: d.accountId, confirmedAt: now },
    },
  ];
  // Both confirming at once: the stream's version serializes them, the later one activates.
  if (state.confirmedBy.length > 0)
    events.push({ type: 'ThreadActivated', data: { threadId, activatedAt: now } });
  return events;
}

/**
 * The reactor on GoferDeleted: the thread reads as closed for the counterpart; events already in the
 * log stay replayable, no new ones follow.
 */
export function closeForDeletedGofer(
  state: ThreadState,
  d: Data<'CloseForDeletedGofer'>,
  now: string,
): ThreadEvent[] {
  if (state.status === 'none' || state.status === 'closed') return [];
  const sides = sidesOf(state, d.goferId);
  if (!sides) return [];
  const { goferId, accountId } = sides.self;
  return [
    {
      type: 'ThreadClosed',
      data: { threadId: state.threadId, reason: 'gofer_deleted', goferId, accountId, closedAt: now },
    },
  ];
}

/**
 * The reactor on AccountBanned (and a session that finds a side banned): the thread ends for the
 * counterpart as any closed thread does, and discovery, the session and match requests stop there.
 */
export function closeForBannedAccount(
  state: ThreadState,
  d: Data<'CloseForBannedAccount'>,
  now: string,
): ThreadEvent[] {
  if (state.status === 'none' || state.status === 'closed') return [];
  const side = [state.a, state.b].find((s) => s.accountId === d.accountId);
  if (!side) return [];
  const { goferId, accountId } = side;
  return [
    {
      type: 'ThreadClosed',
      data: { threadId: state.threadId, reason: 'account_banned', goferId, accountId, closedAt: now },
    },
  ];
}

/**
 * The session reactor's step `turnIndex`. A step already recorded (redelivery) appends nothing;
 * a closed thread takes no more turns — a deleted Gofer stops producing events.
 */
export function addSessionTurn(state: ThreadState, d: Data<'AddSessionTurn'>, now: string): ThreadEvent[] {
  if (state.status === 'none') throw notFound();
  if (state.status === 'closed' || d.turnIndex < state.turnCount) return [];
  if (!sidesOf(state, d.senderGoferId))
    throw new RejectedError('NOT_A_PARTICIPANT', 'Sender is not in the thread');
  if (state.status !== 'active') throw new IllegalStateError('THREAD_NOT_ACTIVE', 'Thread is not active');
  if (d.turnIndex > state.turnCount)
    throw new IllegalStateError('SESSION_TURN_OUT_OF_ORDER', 'Session turn out of order');
  if (state.turnCount >= SESSION_MAX_TURNS)
    throw new IllegalStateError('SESSION_FULL', 'Session is over its turn limit');
  const { threadId } = state;
  return [
    {
      type: 'SessionTurnAdded',
      data: {
        threadId,
        turnId: sessionTurnIdFor(threadId, d.turnIndex),
        turnIndex: d.turnIndex,
        senderGoferId: d.senderGoferId,
        content: d.content,
        createdAt: now,
      },
    },
  ];
}

export function endSession(state: ThreadState, now: string): ThreadEvent[] {
  if (state.status === 'none') throw notFound();
  if (state.status === 'closed' || state.status === 'session_ended') return [];
  if (state.status !== 'active') throw new IllegalStateError('THREAD_NOT_ACTIVE', 'Thread is not active');
  return [
    { type: 'SessionEnded', data: { threadId: state.threadId, turnCount: state.turnCount, endedAt: now } },
  ];
}

export function decideThread(command: Timed<ThreadCommand>, state: ThreadState): ThreadEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'ProposePairing':
      return propose(state, command.data, now);
    case 'ConfirmPairing':
      return confirm(state, command.data, now);
    case 'CloseForDeletedGofer':
      return closeForDeletedGofer(state, command.data, now);
    case 'CloseForBannedAccount':
      return closeForBannedAccount(state, command.data, now);
    case 'AddSessionTurn':
      return addSessionTurn(state, command.data, now);
    case 'EndSession':
      return endSession(state, now);
    case 'RecordSummaryCard':
      return recordSummaryCard(state, command.data, now);
    case 'RequestMatch':
      return requestMatch(state, command.data, now);
    case 'DecideMatchRequest':
      return decideMatchRequest(state, command.data, now);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const threadDecider: Decider<ThreadState, ThreadEvent, Timed<ThreadCommand>> = {
  initialState: initialThreadState,
  evolve: evolveThread,
  decide: decideThread,
};
