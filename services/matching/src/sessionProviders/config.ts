import { openAiOptions, type LlmConfig } from '@oan/config';
import { OpenAiSessionProvider } from './openai.ts';
import type { SessionProvider } from './provider.ts';
import { ScriptedSessionProvider } from './scripted.ts';

/** The provider's variables as src/config.ts parses them: the same names and rules as the gofers brain. */
export type SessionProviderConfig = LlmConfig;

export function createSessionProvider(config: SessionProviderConfig): SessionProvider {
  const openai = openAiOptions(config);
  return openai ? new OpenAiSessionProvider(openai) : new ScriptedSessionProvider();
}
