export * from './types.ts';
export { brainOutputSchema, responseConstraintsSchema } from './schema.ts';
export { ScriptedBrain, scriptedReply } from './scripted/scriptedBrain.ts';
export { OpenAiBrain, type OpenAiBrainOptions } from './openai/openaiBrain.ts';
export { buildPrompt, systemTurn, userTurn, type PromptMessage, type TurnSource } from './openai/prompt.ts';
export { createBrainProvider, type BrainConfig } from './config.ts';
export { buildBrainInput, type PreparedInput } from './input.ts';
export { brainMetrics } from './metrics.ts';
