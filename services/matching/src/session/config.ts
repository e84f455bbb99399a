import { OpenAiSessionProvider } from './openai';
import type { SessionProvider } from './provider';
import { ScriptedSessionProvider } from './scripted';

/** The provider's variables as src/config.ts parses them: the same names and rules as the gofers brain. */
export interface SessionProviderConfig {
  GOFER_BRAIN: 'scripted' | 'openai';
  OPENAI_BASE_URL?: string | undefined;
  OPENAI_API_KEY?: string | undefined;
  OPENAI_MODEL?: string | undefined;
  OPENAI_TIMEOUT_MS: number;
  OPENAI_MAX_RETRIES: number;
}

export function createSessionProvider(config: SessionProviderConfig): SessionProvider {
  switch (config.GOFER_BRAIN) {
    case 'scripted':
      return new ScriptedSessionProvider();
    case 'openai':
      if (!config.OPENAI_BASE_URL || !config.OPENAI_MODEL) {
        throw new Error('GOFER_BRAIN=openai needs OPENAI_BASE_URL and OPENAI_MODEL');
      }
      return new OpenAiSessionProvider({
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
