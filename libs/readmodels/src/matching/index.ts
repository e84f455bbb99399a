/** The matching read model: its tables, its projection and the queries others run on it. */
export { matchingTables } from './tables.ts';
export { matchingProjection } from './projection.ts';
export { SUMMARY_PREVIEW_LENGTH } from './notifications.ts';
export {
  acceptedMatchOfConversation,
  pairingCardOf,
  pairingCardsOf,
  threadIdsOfGofer,
  type AcceptedMatchRow,
  type PairingCardRow,
} from './queries.ts';
