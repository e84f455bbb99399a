// @oan/matching — the matching context (issue 4): its pure domain, the command service's HTTP side
// (threads §4.5, match requests §4.6) and its store; the reactors come next.
export { buildApp, createMatchingContext, type MatchingAppDeps, type MatchingContextDeps } from './app';
export { matchingEnv, loadMatchingConfig, type MatchingConfig } from './config';
export { createMatchingStore, matchingMigrations } from './infra/store';
export { loadAccountThreads, loadThread, runThreadCommand, type MatchingContext } from './commands/context';
export { ThreadWrites, WRITE_SOURCE } from './commands/writes';
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
