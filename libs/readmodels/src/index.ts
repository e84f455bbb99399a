/**
 * Every read model, one module each: its tables (migrations), its projection (what each domain event
 * of its context does to them, and which OAN notifications it yields). The projector runs them; the
 * services and tests that need the tables take them from here.
 */
import type { MigrationDef } from '@oan/db';
import {
  appliedPositionsMigration,
  oanEventMigration,
  oanExpectedMigration,
  projectorMigration,
} from '@oan/projection';
import { accountsDropped, accountsTables, authProjection } from './accounts';
import { agentsProjection, agentsTables } from './agents';
import { conversationsProjection, conversationsTables } from './conversations';
import { gofersProjection, gofersTables } from './gofers';
import { matchingProjection, matchingTables } from './matching';
import type { Projection } from './types';

export * from './types';
export { SUMMARY_PREVIEW_LENGTH } from './matching';

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
} from './gofers';
export {
  acceptedMatchOfConversation,
  pairingCardOf,
  pairingCardsOf,
  threadIdsOfGofer,
  type AcceptedMatchRow,
  type PairingCardRow,
} from './matching';
export { conversationHistoryPage, type ConversationMessageRow } from './conversations';
export {
  discoverySeed,
  discoverySeeds,
  LIVE_GOFERS,
  OPEN_THREAD_STATUSES,
  threadLoads,
  type DiscoverySeedRow,
  type ThreadLoadRow,
} from './discovery';
export { openDecisionEnvelopes, openQuestionEnvelopes, type OpenEnvelopeRow } from './digest';
export { onlineAgent, onlineAgents, type AgentRow } from './agents';

/** Every context's projection. */
export const projections: Projection[] = [
  authProjection,
  gofersProjection,
  matchingProjection,
  conversationsProjection,
  agentsProjection,
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
  ...conversationsTables,
  matchingTables[1]!,
  oanExpectedMigration,
  ...agentsTables,
  accountsDropped,
];
