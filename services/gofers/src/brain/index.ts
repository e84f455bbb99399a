export * from './types';
export { brainOutputSchema, responseConstraintsSchema } from './schema';
export { ScriptedBrain, scriptedReply } from './scripted/scriptedBrain';
export { OpenAiBrain, type OpenAiBrainOptions } from './openai/openaiBrain';
export { buildPrompt, systemTurn, userTurn, type PromptMessage, type TurnSource } from './openai/prompt';
export { createBrainProvider, type BrainConfig } from './config';
export { buildBrainInput, type PreparedInput } from './input';
export { brainMetrics } from './metrics';
