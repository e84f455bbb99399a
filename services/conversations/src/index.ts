export {
  buildApp,
  createConversationContext,
  type ConversationAppDeps,
  type ConversationContextDeps,
} from './app';
export { conversationsEnv, loadConversationsConfig, type ConversationsConfig } from './config';
export {
  applyToWriteState,
  conversationMigrations,
  createConversationStore,
  rebuildWriteState,
} from './infra/store';
export { WRITE_SOURCE, openConversation, type ConversationContext } from './commands/context';
export { sendMessage, recallMessage } from './commands/messages';
export { closeConversationsOf } from './commands/close';
export { startGoferDeleted, startOpener } from './reactors/lifecycle';
export * from './domain/events';
export * from './domain/conversation';
