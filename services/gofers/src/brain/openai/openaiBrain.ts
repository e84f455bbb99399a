import OpenAI from 'openai';
import { brainMetrics } from '../metrics';
import { brainOutputSchema } from '../schema';
import { BrainError, type BrainInput, type BrainOutput, type BrainProvider } from '../types';
import { buildPrompt } from './prompt';

export interface OpenAiBrainOptions {
  /** An OpenAI-compatible endpoint root, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Per HTTP request. */
  timeoutMs: number;
  /** The client's own retries of connection errors, timeouts, 408/409/429 and 5xx. */
  maxRetries: number;
}

/** A brain on any OpenAI-compatible chat-completions endpoint; its reply must be a BrainOutput JSON object. */
export class OpenAiBrain implements BrainProvider {
  readonly kind = 'openai';
  private readonly client: OpenAI;

  constructor(private readonly opts: OpenAiBrainOptions) {
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: opts.apiKey,
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
    });
  }

  async reply(input: BrainInput): Promise<BrainOutput> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create({
        model: this.opts.model,
        messages: buildPrompt(input),
        response_format: { type: 'json_object' },
      });
    } catch (err) {
      // The client's errors carry status and the endpoint's text, never our prompt.
      throw new BrainError('BRAIN_UPSTREAM', `chat completion failed: ${describe(err)}`, { cause: err });
    }
    if (completion.usage) {
      brainMetrics.tokens.inc({ kind: 'prompt' }, completion.usage.prompt_tokens);
      brainMetrics.tokens.inc({ kind: 'completion' }, completion.usage.completion_tokens);
    }
    const text = completion.choices[0]?.message.content;
    if (!text) throw new BrainError('BRAIN_INVALID_OUTPUT', 'the completion has no content');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BrainError('BRAIN_INVALID_OUTPUT', 'the completion is not JSON');
    }
    const result = brainOutputSchema.safeParse(parsed);
    if (!result.success) {
      // Paths and issue codes only: the values may be the owner's words.
      const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}:${i.code}`).join(', ');
      throw new BrainError('BRAIN_INVALID_OUTPUT', `the completion does not match BrainOutput (${where})`);
    }
    return result.data;
  }
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError) return `${err.name} ${err.status ?? ''}`.trim();
  return err instanceof Error ? err.name : 'unknown error';
}
