import { ForbiddenError, IllegalStateError, NotFoundError } from './errors.ts';
import type { ThreadEvent } from '@oan/domain';
import { conversationIdFor, matchIdFor } from './ids.ts';
import { pendingRequest, sidesOf, type MatchRequestState, type ThreadState } from './threadState.ts';

/** Match requests on a thread: every decision about them is taken on the thread's stream. */

export interface RequestMatch {
  /** A fresh id; used only when a new request is recorded. */
  requestId: string;
  /** The caller's Gofer in the thread (`roleId`) and the caller. */
  goferId: string;
  accountId: string;
}

export interface DecideMatchRequest {
  requestId: string;
  accountId: string;
  accept: boolean;
}

const threadNotFound = () => new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');

function decision(
  r: MatchRequestState,
  threadId: string,
  accept: boolean,
  decidedBy: 'recipient' | 'cross_request',
  now: string,
): ThreadEvent {
  const { status: _s, ...sides } = r;
  return {
    type: 'MatchRequestDecided',
    data: {
      threadId,
      ...sides,
      status: accept ? 'accepted' : 'rejected',
      decidedBy,
      matchId: accept ? matchIdFor(threadId) : null,
      conversationId: accept ? conversationIdFor(threadId) : null,
      decidedAt: now,
    },
  };
}

/**
 * `POST /match-requests`. Idempotent: an existing match, or this side's own open
 * request, appends nothing — the caller answers from `matchStatusFor` on the resulting state.
 * An open request from the other side counts as that side's consent: asking back accepts it, so
 * both sides requesting at once (two commands serialized by the stream's version) end in one match.
 */
export function requestMatch(state: ThreadState, d: RequestMatch, now: string): ThreadEvent[] {
  // Unknown thread, a Gofer not in it, or not the caller's: one 404 for all (probe-safe).
  if (state.status === 'none') throw threadNotFound();
  const sides = sidesOf(state, d.goferId);
  if (!sides || sides.self.accountId !== d.accountId) throw threadNotFound();
  if (state.match.matchId !== null) return [];
  if (state.status === 'closed') {
    // The caller's own Gofer is gone: as unknown as any other Gofer it does not own.
    if (state.closedReason === 'gofer_deleted' && state.closedByGoferId === d.goferId) throw threadNotFound();
    throw new IllegalStateError('THREAD_CLOSED', 'Thread is closed');
  }
  if (state.status === 'awaiting_confirmation') {
    throw new IllegalStateError('THREAD_NOT_ACTIVE', 'Thread is not active yet');
  }
  const open = pendingRequest(state);
  if (open?.requesterGoferId === d.goferId) return [];
  if (open) return [decision(open, state.threadId, true, 'cross_request', now)];
  return [
    {
      type: 'MatchRequested',
      data: {
        threadId: state.threadId,
        requestId: d.requestId,
        requesterGoferId: sides.self.goferId,
        requesterAccountId: sides.self.accountId,
        recipientGoferId: sides.other.goferId,
        recipientAccountId: sides.other.accountId,
        requestedAt: now,
      },
    },
  ];
}

/**
 * `POST /match-requests/:requestId/decision`. The recipient check comes before the
 * state check, so a stranger cannot learn whether a request exists or was decided (probe-safe 403).
 * A request cancelled by its thread closing counts as decided.
 */
export function decideMatchRequest(state: ThreadState, d: DecideMatchRequest, now: string): ThreadEvent[] {
  const request =
    state.status === 'none' ? undefined : state.match.requests.find((r) => r.requestId === d.requestId);
  if (state.status === 'none' || !request || request.recipientAccountId !== d.accountId) {
    throw new ForbiddenError('MATCH_REQUEST_FORBIDDEN', 'Forbidden');
  }
  if (request.status !== 'pending') {
    throw new IllegalStateError('MATCH_REQUEST_ALREADY_DECIDED', 'Match request already decided');
  }
  return [decision(request, state.threadId, d.accept, 'recipient', now)];
}
