/**
 * Every read model, one folder each (`<model>/`): its tables (migrations), its projection (what each
 * domain event of its context does to them), the OAN notifications it derives and the queries others
 * run on its tables. The projector runs them; the
 * services and tests that need the tables take them from here.
 */
import type { MigrationDef } from '@oan/db';
import {
  appliedPositionsMigration,
  oanEventMigration,
  oanExpectedMigration,
  oanExpectedPlacesMigration,
  projectorMigration,
  relayMessageSeqsMigration,
} from '@oan/projection';
import { a2aProjection, a2aTables } from './a2a/index.ts';
import { accountsDropped, accountsTables, authProjection } from './accounts/index.ts';
import { agentsProjection, agentsTables } from './agents/index.ts';
import {
  conversationRevisionsTables,
  conversationsProjection,
  conversationsTables,
  deviceKeysProjection,
} from './conversations/index.ts';
import { gofersProjection, gofersTables } from './gofers/index.ts';
import { matchingProjection, matchingTables } from './matching/index.ts';
import type { Projection } from './types.ts';

export * from './types.ts';
export { SUMMARY_PREVIEW_LENGTH } from './matching/index.ts';

// The queries others may run on the read models: no service writes SQL against `read.*` itself.
export {
  deletedGoferAmong,
  goferFileOf,
  goferFiles,
  goferList,
  goferMessagesSince,
  goferName,
  goferProfile,
  recentGoferMessages,
  type GoferFileRow,
  type GoferListRow,
  type GoferMessageRow,
  type GoferProfileRow,
} from './gofers/index.ts';
export {
  acceptedMatchOfConversation,
  pairingCardOf,
  pairingCardsOf,
  threadIdsOfGofer,
  type AcceptedMatchRow,
  type PairingCardRow,
} from './matching/index.ts';
export {
  conversationHistoryPage,
  relayedMessageOf,
  scrubbedRelayPayload,
  type ConversationMessageRow,
} from './conversations/index.ts';
export {
  discoverySeed,
  discoverySeeds,
  LIVE_GOFERS,
  OPEN_THREAD_STATUSES,
  threadLoads,
  type DiscoverySeedRow,
  type ThreadLoadRow,
} from './discovery.ts';
export {
  openDecisionEnvelopes,
  openQuestionEnvelopes,
  settledEventIds,
  settledSql,
  type OpenEnvelopeRow,
} from './digest.ts';
export { onlineAgent, onlineAgents, type AgentRow } from './agents/index.ts';

/** Every context's projection. */
export const projections: Projection[] = [
  authProjection,
  gofersProjection,
  matchingProjection,
  conversationsProjection,
  deviceKeysProjection,
  agentsProjection,
  a2aProjection,
];

/**
 * The projector's schema and every table of schema `read`, in the order they were first migrated (the
 * names are recorded in `projector.mikro_orm_migrations`; never renumber).
 */
export const readModelMigrations: MigrationDef[] = [
  projectorMigration,
  oanEventMigration,
  ...accountsTables,
  appliedPositionsMigration,
  ...gofersTables,
  matchingTables[0]!,
  conversationsTables[0]!,
  matchingTables[1]!,
  oanExpectedMigration,
  ...agentsTables,
  accountsDropped,
  ...a2aTables,
  conversationsTables[1]!,
  ...conversationRevisionsTables,
  relayMessageSeqsMigration,
  oanExpectedPlacesMigration,
];
