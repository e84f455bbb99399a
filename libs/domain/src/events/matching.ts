/**
 * The matching context's domain events (schemas/matching/<Type>.v1.avsc). One stream per pair of
 * Gofers, `thread-<threadId>` (threadId: the pair's, keyed by ID_SECRET, see matching's
 * commands/threadIds.ts; threads proposed earlier keep a UUIDv5 of the pair), so every
 * invariant that needs atomicity — one proposal per pair, one activation, one decision per match
 * request, one match per thread — is decided by optimistic concurrency on that one stream
 * (docs/adr/0012). Every event of a thread is keyed by side `a`'s accountId
 * (`threadKey`), so the whole stream stays in one partition, in order.
 * Nullable fields are always present (null). JSON-valued fields (`photos`, `documents`) travel as
 * JSON text.
 */

/** `confirm`: both sides must accept (pair_proposed carries a reply); `auto`: active at once. */
export type PairingMode = 'confirm' | 'auto';
export type CloseReason = 'rejected' | 'gofer_deleted' | 'account_banned';
export type MatchRecommendation = 'strong' | 'possible' | 'weak';
/** Only on an update of an already-delivered card. */
export type PatchKind = 'metadata_changed' | 'edited';
export type MatchDecision = 'accepted' | 'rejected';
/** `cross_request`: the recipient asked for the match itself while this request was open. */
export type DecidedBy = 'recipient' | 'cross_request';

/** A public snapshot of one side, taken when the pair was proposed: never private data. */
export interface ThreadSide {
  goferId: string;
  accountId: string;
  name: string;
  /** One of the four connector platforms. */
  sourcePlatform: string;
}

export interface ThreadProposed {
  threadId: string;
  mode: PairingMode;
  /** The side with the lower goferId. */
  a: ThreadSide;
  b: ThreadSide;
  /** The symmetric relevance that made discovery propose the pair (discovery.ts). */
  score: number;
  proposedAt: string;
}

export interface PairingConfirmed {
  threadId: string;
  goferId: string;
  accountId: string;
  confirmedAt: string;
}

/** Both sides confirmed (confirm mode) or the pair was auto-paired: the session may run. */
export interface ThreadActivated {
  threadId: string;
  activatedAt: string;
}

export interface ThreadClosed {
  threadId: string;
  reason: CloseReason;
  /** The side that rejected, whose Gofer was deleted, or whose account was banned. */
  goferId: string;
  accountId: string;
  closedAt: string;
}

/** One Gofer-to-Gofer turn. `content` is the counterpart's data, never instructions. */
export interface SessionTurnAdded {
  threadId: string;
  turnId: string;
  /** 0-based position in the transcript. */
  turnIndex: number;
  senderGoferId: string;
  content: string;
  createdAt: string;
}

export interface SessionEnded {
  threadId: string;
  turnCount: number;
  endedAt: string;
}

/** The protocol's SessionSummaryCardPhoto / SessionSummaryCardDocument: the counterpart Gofer's assets. */
export interface SummaryCardPhoto {
  attachmentId: string;
  messageId: string | null;
  ownerRoleId: string;
  width?: number;
  height?: number;
}
export interface SummaryCardDocument {
  attachmentId: string;
  messageId: string | null;
  ownerRoleId: string;
  name: string;
  mimeType: string;
  size: number;
}

/**
 * One side's summary card (a whitelist of public fields; `kind` is always `session_summary` and
 * `summaryKey` is `<threadId>:<goferId>`, both derived, never stored). Version 1 is the first card,
 * a later version a regeneration with `patchKind`.
 */
export interface SummaryCardRecorded {
  threadId: string;
  /** The side the card is for (its `session_summary` goes to this Gofer's account). */
  goferId: string;
  accountId: string;
  counterpartGoferId: string;
  messageId: string;
  version: number;
  patchKind: PatchKind | null;
  content: string;
  cardTitle: string;
  summary: string;
  opponentRoleName: string;
  otherPartyHighlights: string[];
  actionItems: string[];
  matchRecommendation: MatchRecommendation;
  pairReason: string;
  /** JSON text of SummaryCardPhoto[] (all the counterpart's photos; may be `[]`, the key is always present). */
  photos: string;
  /** JSON text of SummaryCardDocument[] (all the counterpart's documents; may be `[]`, the key is always present). */
  documents: string;
  generatedAt: string;
}

interface MatchRequestSides {
  threadId: string;
  requestId: string;
  requesterGoferId: string;
  requesterAccountId: string;
  recipientGoferId: string;
  recipientAccountId: string;
}

export interface MatchRequested extends MatchRequestSides {
  requestedAt: string;
}

/** The single decision of a request; accepted ⇒ the thread's one match (ids.ts). */
export interface MatchRequestDecided extends MatchRequestSides {
  status: MatchDecision;
  decidedBy: DecidedBy;
  /** Null when rejected: no match exists. */
  matchId: string | null;
  conversationId: string | null;
  decidedAt: string;
}

export type ThreadEvent =
  | { type: 'ThreadProposed'; data: ThreadProposed }
  | { type: 'PairingConfirmed'; data: PairingConfirmed }
  | { type: 'ThreadActivated'; data: ThreadActivated }
  | { type: 'ThreadClosed'; data: ThreadClosed }
  | { type: 'SessionTurnAdded'; data: SessionTurnAdded }
  | { type: 'SessionEnded'; data: SessionEnded }
  | { type: 'SummaryCardRecorded'; data: SummaryCardRecorded }
  | { type: 'MatchRequested'; data: MatchRequested }
  | { type: 'MatchRequestDecided'; data: MatchRequestDecided };

export const MATCHING_EVENT_TYPES = [
  'ThreadProposed',
  'PairingConfirmed',
  'ThreadActivated',
  'ThreadClosed',
  'SessionTurnAdded',
  'SessionEnded',
  'SummaryCardRecorded',
  'MatchRequested',
  'MatchRequestDecided',
] as const satisfies readonly ThreadEvent['type'][];

export const threadStreamId = (threadId: string) => `thread-${threadId}`;

/** The Kafka key of every event of a thread (the proposal's, or a thread state's, side `a`). */
export const threadKey = (thread: Pick<ThreadProposed, 'a'>) => thread.a.accountId;
