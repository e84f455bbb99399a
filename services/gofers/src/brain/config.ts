import { openAiOptions, type LlmConfig } from '@oan/config';
import { OpenAiBrain } from './openai/openaiBrain.ts';
import { ScriptedBrain } from './scripted/scriptedBrain.ts';
import type { BrainProvider, CallerBrain } from './types.ts';

/** The brain's variables as the service's config parses them (src/config.ts, gofersEnv). */
export type BrainConfig = LlmConfig;

export function createBrainProvider(config: BrainConfig): BrainProvider & CallerBrain {
  const openai = openAiOptions(config);
  return openai ? new OpenAiBrain(openai) : new ScriptedBrain();
}
