import { openAiOptions, type LlmConfig } from '@oan/config';
import { OpenAiSessionProvider } from './openai';
import type { SessionProvider } from './provider';
import { ScriptedSessionProvider } from './scripted';

/** The provider's variables as src/config.ts parses them: the same names and rules as the gofers brain. */
export type SessionProviderConfig = LlmConfig;

export function createSessionProvider(config: SessionProviderConfig): SessionProvider {
  const openai = openAiOptions(config);
  return openai ? new OpenAiSessionProvider(openai) : new ScriptedSessionProvider();
}
