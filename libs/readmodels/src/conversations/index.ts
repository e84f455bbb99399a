/** The conversations read model: its tables, its projection and the queries others run on it. */
export { conversationRevisionsTables, conversationsTables } from './tables.ts';
export { conversationsProjection, deviceKeysProjection } from './projection.ts';
export { conversationHistoryPage, type ConversationMessageRow } from './queries.ts';
export { relayedMessageOf, scrubbedRelayPayload } from './notifications.ts';
