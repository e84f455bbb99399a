// @oan/matching — the matching context (issue 4). So far its pure domain; HTTP, store and reactors next.
export * from './domain/events';
export * from './domain/errors';
export * from './domain/ids';
export {
  SESSION_MAX_TURNS,
  cardFingerprint,
  initialThreadState,
  evolveThread,
  matchStatusFor,
  pendingRequest,
  sidesOf,
  type ClosedThread,
  type ExistingThread,
  type MatchRequestState,
  type MatchState,
  type MatchStatus,
  type ThreadData,
  type ThreadState,
} from './domain/threadState';
export {
  addSessionTurn,
  assertParticipant,
  closeForDeletedGofer,
  confirm,
  decideThread,
  endSession,
  propose,
  threadDecider,
  type ThreadCommand,
  type Timed,
} from './domain/thread';
export {
  decideMatchRequest,
  requestMatch,
  type DecideMatchRequest,
  type RequestMatch,
} from './domain/matchRequests';
export {
  cardDocuments,
  cardPhotos,
  recordSummaryCard,
  type RecordSummaryCard,
  type SessionCardFields,
} from './domain/summaryCard';
export * from './domain/discovery';
export * from './domain/session';
