import { describe, expect, it } from 'vitest';
import type { ThreadEvent, ThreadSide } from '@oan/domain';
import { conversationIdFor, matchIdFor } from '../src/domain/ids.ts';
import { threadDecider, type ThreadCommand } from '../src/domain/thread.ts';
import { matchStatusFor, type ExistingThread } from '../src/domain/threadState.ts';
import {
  A,
  B,
  NOW,
  STRANGER,
  THREAD,
  closed,
  given,
  proposed,
  requested,
  running,
  sessionEnded,
} from './fixtures.ts';

const request = (
  side: { goferId: string; accountId: string },
  requestId = `r-${side.goferId}`,
): ThreadCommand => ({
  type: 'RequestMatch',
  data: { requestId, goferId: side.goferId, accountId: side.accountId },
});
const decide = (requestId: string, accountId: string, accept: boolean): ThreadCommand => ({
  type: 'DecideMatchRequest',
  data: { requestId, accountId, accept },
});
const decided = (
  requestId: string,
  from: ThreadSide,
  to: ThreadSide,
  status: 'accepted' | 'rejected',
  decidedBy: 'recipient' | 'cross_request' = 'recipient',
): ThreadEvent => {
  const { requestedAt: _, ...sides } = (
    requested(requestId, from, to) as Extract<ThreadEvent, { type: 'MatchRequested' }>
  ).data;
  const accepted = status === 'accepted';
  return {
    type: 'MatchRequestDecided',
    data: {
      ...sides,
      status,
      decidedBy,
      matchId: accepted ? matchIdFor(THREAD) : null,
      conversationId: accepted ? conversationIdFor(THREAD) : null,
      decidedAt: NOW,
    },
  };
};
const fold = (events: ThreadEvent[]) =>
  events.reduce(threadDecider.evolve, threadDecider.initialState()) as ExistingThread;
const ended = [...running(), sessionEnded()];

describe('requesting a match', () => {
  it('records a request from one side to the other', () => {
    given(...ended)
      .when(request(A))
      .then(requested('r-g-a', A, B));
    expect(matchStatusFor(fold([...ended, requested('r1', A, B)]), A.goferId)).toEqual({
      status: 'outgoing_pending',
      pendingRequestId: 'r1',
      matchId: null,
      conversationId: null,
    });
  });

  it('is idempotent for a pending request of the same side', () => {
    given(...ended, requested('r1', A, B))
      .when(request(A, 'r2'))
      .thenNothing();
  });

  it('returns the existing match instead of failing, with no event', () => {
    const matched = [...ended, requested('r1', A, B), decided('r1', A, B, 'accepted')];
    given(...matched)
      .when(request(A))
      .thenNothing();
    given(...matched)
      .when(request(B))
      .thenNothing();
    expect(matchStatusFor(fold(matched), B.goferId)).toEqual({
      status: 'matched',
      pendingRequestId: null,
      matchId: matchIdFor(THREAD),
      conversationId: conversationIdFor(THREAD),
    });
  });

  it('answers an unknown thread, a foreign Gofer and a Gofer not in it with one 404', () => {
    given().when(request(A)).thenThrows('THREAD_NOT_FOUND');
    given(...ended)
      .when(request(STRANGER))
      .thenThrows('THREAD_NOT_FOUND');
    given(...ended)
      .when(request({ goferId: A.goferId, accountId: B.accountId }))
      .thenThrows('THREAD_NOT_FOUND');
  });

  it('refuses a thread not active yet, or closed; a deleted own Gofer is unknown', () => {
    given(proposed()).when(request(A)).thenThrows('THREAD_NOT_ACTIVE');
    given(...ended, closed('gofer_deleted', B))
      .when(request(A))
      .thenThrows('THREAD_CLOSED');
    given(...ended, closed('gofer_deleted', A))
      .when(request(A))
      .thenThrows('THREAD_NOT_FOUND');
  });

  it('may be asked again after a rejection', () => {
    given(...ended, requested('r1', A, B), decided('r1', A, B, 'rejected'))
      .when(request(A, 'r2'))
      .then(requested('r2', A, B));
  });
});

describe('when both sides request at once', () => {
  it('ends in one match: the second request accepts the first (two commands on one stream)', () => {
    const first = given(...ended)
      .when(request(A))
      .events();
    expect(first).toEqual([requested('r-g-a', A, B)]);
    given(...ended, ...first)
      .when(request(B))
      .then(decided('r-g-a', A, B, 'accepted', 'cross_request'));
    const state = fold([...ended, ...first, decided('r-g-a', A, B, 'accepted', 'cross_request')]);
    expect(matchStatusFor(state, A.goferId)).toEqual(matchStatusFor(state, B.goferId));
  });

  it('leaves the recipient nothing to decide afterwards', () => {
    given(...ended, requested('r1', A, B), decided('r1', A, B, 'accepted', 'cross_request'))
      .when(decide('r1', B.accountId, true))
      .thenThrows('MATCH_REQUEST_ALREADY_DECIDED');
  });
});

describe('deciding a match request', () => {
  const pending = [...ended, requested('r1', A, B)];

  it("accepts with the thread's match and conversation ids", () => {
    given(...pending)
      .when(decide('r1', B.accountId, true))
      .then(decided('r1', A, B, 'accepted'));
  });

  it('rejects with null match and conversation ids', () => {
    given(...pending)
      .when(decide('r1', B.accountId, false))
      .then(decided('r1', A, B, 'rejected'));
  });

  it('refuses the requester, a stranger and an unknown id with one probe-safe 403', () => {
    given(...pending)
      .when(decide('r1', A.accountId, true))
      .thenThrows('MATCH_REQUEST_FORBIDDEN');
    given(...pending)
      .when(decide('r1', STRANGER.accountId, true))
      .thenThrows('MATCH_REQUEST_FORBIDDEN');
    given(...pending)
      .when(decide('nope', B.accountId, true))
      .thenThrows('MATCH_REQUEST_FORBIDDEN');
    given()
      .when(decide('r1', B.accountId, true))
      .thenThrows('MATCH_REQUEST_FORBIDDEN');
  });

  it('refuses a second decision with 400, but a stranger still gets the 403', () => {
    const done = [...pending, decided('r1', A, B, 'rejected')];
    given(...done)
      .when(decide('r1', B.accountId, true))
      .thenThrows('MATCH_REQUEST_ALREADY_DECIDED');
    given(...done)
      .when(decide('r1', A.accountId, true))
      .thenThrows('MATCH_REQUEST_FORBIDDEN');
  });

  it('treats a request whose thread closed as decided', () => {
    given(...pending, closed('gofer_deleted', A))
      .when(decide('r1', B.accountId, true))
      .thenThrows('MATCH_REQUEST_ALREADY_DECIDED');
    expect(matchStatusFor(fold([...pending, closed('gofer_deleted', A)]), B.goferId).status).toBe('none');
  });

  it('shows the recipient an incoming request', () => {
    expect(matchStatusFor(fold(pending), B.goferId)).toMatchObject({
      status: 'incoming_pending',
      pendingRequestId: 'r1',
    });
  });
});
