import { JsonCompletionError, JsonCompletions, type JsonCompletionsOptions } from '@oan/completions';
import { brainMetrics } from '../metrics.ts';
import { brainOutputSchema } from '../schema.ts';
import { BrainError, type BrainInput, type BrainOutput, type BrainProvider } from '../types.ts';
import { buildPrompt } from './prompt.ts';

export type OpenAiBrainOptions = Omit<JsonCompletionsOptions, 'onUsage'>;

/** A brain on any OpenAI-compatible chat-completions endpoint; its reply must be a BrainOutput JSON object. */
export class OpenAiBrain implements BrainProvider {
  readonly kind = 'openai';
  private readonly completions: JsonCompletions;

  constructor(opts: OpenAiBrainOptions) {
    this.completions = new JsonCompletions({
      ...opts,
      onUsage: (u) => {
        brainMetrics.tokens.inc({ kind: 'prompt' }, u.promptTokens);
        brainMetrics.tokens.inc({ kind: 'completion' }, u.completionTokens);
      },
    });
  }

  async reply(input: BrainInput): Promise<BrainOutput> {
    try {
      return await this.completions.complete(buildPrompt(input), brainOutputSchema);
    } catch (err) {
      if (!(err instanceof JsonCompletionError)) throw err;
      const code = err.kind === 'upstream' ? 'BRAIN_UPSTREAM' : 'BRAIN_INVALID_OUTPUT';
      throw new BrainError(code, err.message, { cause: err });
    }
  }
}
