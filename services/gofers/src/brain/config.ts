import { OpenAiBrain } from './openai/openaiBrain';
import { ScriptedBrain } from './scripted/scriptedBrain';
import type { BrainProvider } from './types';

/** The brain's variables as the service's config parses them (src/config.ts, gofersEnv). */
export interface BrainConfig {
  GOFER_BRAIN: 'scripted' | 'openai';
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
  OPENAI_MODEL?: string | undefined;
  OPENAI_TIMEOUT_MS: number;
  OPENAI_MAX_RETRIES: number;
}

export function createBrainProvider(config: BrainConfig): BrainProvider {
  switch (config.GOFER_BRAIN) {
    case 'scripted':
      return new ScriptedBrain();
    case 'openai':
      if (!config.OPENAI_BASE_URL || !config.OPENAI_MODEL) {
        throw new Error('GOFER_BRAIN=openai needs OPENAI_BASE_URL and OPENAI_MODEL');
      }
      return new OpenAiBrain({
        baseUrl: config.OPENAI_BASE_URL,
        // Self-hosted compatible endpoints often take no key; the client insists on one.
        apiKey: config.OPENAI_API_KEY ?? 'unused',
        model: config.OPENAI_MODEL,
        timeoutMs: config.OPENAI_TIMEOUT_MS,
        maxRetries: config.OPENAI_MAX_RETRIES,
      });
    default: {
      const never: never = config.GOFER_BRAIN;
      throw new Error(`unknown GOFER_BRAIN ${String(never)}`);
    }
  }
}
