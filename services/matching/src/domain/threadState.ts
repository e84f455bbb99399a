import type {
  CloseReason,
  MatchRequestDecided,
  PairingMode,
  SummaryCardRecorded,
  ThreadEvent,
  ThreadSide,
} from '@oan/domain';

/** Stream `thread-<threadId>`: one pair of Gofers, its pairing, session, cards and match. */

/** A session never runs longer than this many turns (the scripted one uses fewer). */
export const SESSION_MAX_TURNS = 12;

export type MatchRequestStatus = 'pending' | 'accepted' | 'rejected' | 'cancelled';

export interface MatchRequestState {
  requestId: string;
  requesterGoferId: string;
  requesterAccountId: string;
  recipientGoferId: string;
  recipientAccountId: string;
  status: MatchRequestStatus;
}

/** At most one request is pending at a time; a thread has at most one match (ids.ts). */
export interface MatchState {
  requests: readonly MatchRequestState[];
  matchId: string | null;
  conversationId: string | null;
}

export interface CardState {
  version: number;
  /** The card's content fields: a regeneration that changes nothing appends nothing. */
  fingerprint: string;
}

export interface ThreadData {
  threadId: string;
  mode: PairingMode;
  a: ThreadSide;
  b: ThreadSide;
  score: number;
  proposedAt: string;
  /** goferIds that accepted the proposal (confirm mode). */
  confirmedBy: readonly string[];
  turnCount: number;
  /** Latest card version per goferId. */
  cards: ReadonlyMap<string, CardState>;
  match: MatchState;
}

export interface ClosedThread extends ThreadData {
  status: 'closed';
  closedReason: CloseReason;
  closedByGoferId: string;
}

export type ThreadState =
  | { status: 'none' }
  | ({ status: 'awaiting_confirmation' } & ThreadData)
  | ({ status: 'active' } & ThreadData)
  | ({ status: 'session_ended' } & ThreadData)
  | ClosedThread;
export type ExistingThread = Exclude<ThreadState, { status: 'none' }>;

export const initialThreadState = (): ThreadState => ({ status: 'none' });

/** The content of a card, without what changes on every version. */
export function cardFingerprint(
  card: Omit<SummaryCardRecorded, 'messageId' | 'version' | 'patchKind' | 'generatedAt'>,
) {
  const { content, cardTitle, summary, opponentRoleName, otherPartyHighlights, actionItems } = card;
  const { matchRecommendation, pairReason, photos, documents } = card;
  return JSON.stringify([
    content,
    cardTitle,
    summary,
    opponentRoleName,
    otherPartyHighlights,
    actionItems,
    matchRecommendation,
    pairReason,
    photos,
    documents,
  ]);
}

function decided(match: MatchState, d: MatchRequestDecided): MatchState {
  const requests = match.requests.map((r) => (r.requestId === d.requestId ? { ...r, status: d.status } : r));
  return d.status === 'accepted'
    ? { requests, matchId: d.matchId, conversationId: d.conversationId }
    : { ...match, requests };
}

export function evolveThread(state: ThreadState, event: ThreadEvent): ThreadState {
  if (event.type === 'ThreadProposed') {
    if (state.status !== 'none') return state;
    const d = event.data;
    return {
      status: 'awaiting_confirmation',
      ...d,
      confirmedBy: [],
      turnCount: 0,
      cards: new Map(),
      match: { requests: [], matchId: null, conversationId: null },
    };
  }
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'PairingConfirmed':
      return { ...state, confirmedBy: [...state.confirmedBy, event.data.goferId] };
    case 'ThreadActivated':
      return state.status === 'awaiting_confirmation' ? { ...state, status: 'active' } : state;
    case 'ThreadClosed': {
      // A closed thread leaves no request open: the unresolved digest drops it too.
      const requests = state.match.requests.map((r) =>
        r.status === 'pending' ? { ...r, status: 'cancelled' as const } : r,
      );
      return {
        ...state,
        status: 'closed',
        closedReason: event.data.reason,
        closedByGoferId: event.data.goferId,
        match: { ...state.match, requests },
      };
    }
    case 'SessionTurnAdded':
      return { ...state, turnCount: state.turnCount + 1 };
    case 'SessionEnded':
      return state.status === 'active' ? { ...state, status: 'session_ended' } : state;
    case 'SummaryCardRecorded': {
      const cards = new Map(state.cards);
      cards.set(event.data.goferId, {
        version: event.data.version,
        fingerprint: cardFingerprint(event.data),
      });
      return { ...state, cards };
    }
    case 'MatchRequested': {
      const { threadId: _t, requestedAt: _at, ...r } = event.data;
      const requests = [...state.match.requests, { ...r, status: 'pending' as const }];
      return { ...state, match: { ...state.match, requests } };
    }
    case 'MatchRequestDecided':
      return { ...state, match: decided(state.match, event.data) };
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}

// ---- Queries over a thread (the command service answers from them) ----

/** The side whose Gofer is `goferId`, and the other one; null when it is not in the thread. */
export function sidesOf(
  state: ExistingThread,
  goferId: string,
): { self: ThreadSide; other: ThreadSide } | null {
  if (state.a.goferId === goferId) return { self: state.a, other: state.b };
  if (state.b.goferId === goferId) return { self: state.b, other: state.a };
  return null;
}

export const pendingRequest = (state: ExistingThread) =>
  state.match.requests.find((r) => r.status === 'pending') ?? null;

export type MatchStatus = 'none' | 'outgoing_pending' | 'incoming_pending' | 'matched';

/**
 * `MatchStatusResponse` (the answer of `POST /match-requests`) as seen by one side (counterpart
 * details come from read models).
 */
export function matchStatusFor(state: ExistingThread, goferId: string) {
  const { matchId, conversationId } = state.match;
  const pending = pendingRequest(state);
  let status: MatchStatus = 'none';
  if (matchId !== null) status = 'matched';
  else if (pending?.requesterGoferId === goferId) status = 'outgoing_pending';
  else if (pending?.recipientGoferId === goferId) status = 'incoming_pending';
  return {
    status,
    pendingRequestId: status.endsWith('_pending') ? (pending?.requestId ?? null) : null,
    matchId,
    conversationId,
  };
}
