export * from './types.ts';
export { brainOutputSchema, callerOutputSchema, responseConstraintsSchema } from './schema.ts';
export { ScriptedBrain, scriptedReply } from './scripted/scriptedBrain.ts';
export { OpenAiBrain, type OpenAiBrainOptions } from './openai/openaiBrain.ts';
export {
  buildCallerPrompt,
  buildPrompt,
  callerSystemTurn,
  systemTurn,
  userTurn,
  type PromptMessage,
  type TurnSource,
} from './openai/prompt.ts';
export { createBrainProvider, withQaDelay, type BrainConfig } from './config.ts';
export { buildBrainInput, type PreparedInput } from './input.ts';
export { brainMetrics } from './metrics.ts';
