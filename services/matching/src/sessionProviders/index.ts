export * from './provider';
export { ScriptedSessionProvider } from './scripted';
export {
  OpenAiSessionProvider,
  cardOutputSchema,
  turnOutputSchema,
  type OpenAiSessionOptions,
} from './openai';
export { createSessionProvider, type SessionProviderConfig } from './config';
export { sessionMetrics } from './metrics';
export { COUNTERPART_LABEL, buildCardPrompt, buildTurnPrompt, type PromptMessage } from './prompt';
