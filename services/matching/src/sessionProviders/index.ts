export * from './provider.ts';
export { ScriptedSessionProvider } from './scripted.ts';
export {
  OpenAiSessionProvider,
  cardOutputSchema,
  turnOutputSchema,
  type OpenAiSessionOptions,
} from './openai.ts';
export { createSessionProvider, type SessionProviderConfig } from './config.ts';
export { sessionMetrics } from './metrics.ts';
export { COUNTERPART_LABEL, buildCardPrompt, buildTurnPrompt, type PromptMessage } from './prompt.ts';
