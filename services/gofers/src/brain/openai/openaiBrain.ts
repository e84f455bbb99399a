import { JsonCompletionError, JsonCompletions, type JsonCompletionsOptions } from '@oan/completions';
import { brainMetrics } from '../metrics.ts';
import { brainOutputSchema, callerOutputSchema } from '../schema.ts';
import {
  BrainError,
  type BrainInput,
  type BrainOutput,
  type BrainProvider,
  type CallerBrain,
  type CallerInput,
  type CallerOutput,
} from '../types.ts';
import { buildCallerPrompt, buildPrompt } from './prompt.ts';

export type OpenAiBrainOptions = Omit<JsonCompletionsOptions, 'onUsage'>;

/** A brain on any OpenAI-compatible chat-completions endpoint; its reply must be a BrainOutput JSON object. */
export class OpenAiBrain implements BrainProvider, CallerBrain {
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
      throw coded(err);
    }
  }

  /** A relay caller's turn (buildCallerPrompt: the caller's words labelled, never system). */
  async answerCaller(input: CallerInput): Promise<CallerOutput> {
    try {
      return await this.completions.complete(buildCallerPrompt(input), callerOutputSchema);
    } catch (err) {
      throw coded(err);
    }
  }
}

function coded(err: unknown): unknown {
  if (!(err instanceof JsonCompletionError)) return err;
  const code = err.kind === 'upstream' ? 'BRAIN_UPSTREAM' : 'BRAIN_INVALID_OUTPUT';
  return new BrainError(code, err.message, { cause: err });
}
