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

/**
 * QA only (`GOFER_A2A_QA_TURN_DELAY_MS`, refused in production): the caller brain, each answer
 * waiting `ms` first, so a fault test catches A2A turns in flight.
 */
export function withQaDelay(brain: CallerBrain, ms: number): CallerBrain {
  if (ms <= 0) return brain;
  return {
    answerCaller: async (input) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return brain.answerCaller(input);
    },
  };
}
