/** The conversations read model: its tables, its projection and the queries others run on it. */
export { conversationsTables } from './tables.ts';
export { conversationsProjection, deviceKeysProjection } from './projection.ts';
export { conversationHistoryPage, type ConversationMessageRow } from './queries.ts';
