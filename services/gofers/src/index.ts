export { buildApp, createGoferContext, type GoferAppDeps, type GoferContextDeps } from './app';
export { gofersEnv, loadGofersConfig, type GofersConfig } from './config';
export { createGoferStore, goferMigrations } from './infra/store';
export { WRITE_SOURCE, assertOwnsActiveGofer, runGoferCommand, type GoferContext } from './commands/context';
export { createGofer } from './commands/createGofer';
export { postUserMessage } from './commands/postUserMessage';
export { deleteGofer } from './commands/deleteGofer';
export {
  addAssistantTurn,
  type AssistantTurnInput,
  type AssistantTurnResult,
} from './commands/assistantTurn';
export * from './domain/events';
export {
  goferDecider,
  decideGofer,
  assertOwnedActive,
  localeFamily,
  placeholderTexts,
  type GoferState,
  type ActiveGofer,
  type GoferAttachment,
  type GoferProfile,
} from './domain/gofer';
