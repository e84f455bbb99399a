import OpenAI from 'openai';
import type { z } from 'zod';

export interface JsonCompletionsOptions {
  /** An OpenAI-compatible endpoint root, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Per HTTP request. */
  timeoutMs: number;
  /** The client's own retries of connection errors, timeouts, 408/409/429 and 5xx. */
  maxRetries: number;
  /** Told the tokens of every completion that reports them (for a metric). */
  onUsage?: (usage: { promptTokens: number; completionTokens: number }) => void;
}

export type CompletionMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Why a completion gave nothing usable: the endpoint failed (`upstream`, after the client's own
 * retries), or its reply was empty, not JSON, or not the shape asked for (`invalidOutput`). Messages
 * name statuses, JSON paths and issue codes only, never the prompt or the reply's values.
 */
export class JsonCompletionError extends Error {
  readonly kind: 'upstream' | 'invalidOutput';
  constructor(kind: 'upstream' | 'invalidOutput', message: string, options?: ErrorOptions) {
    super(message, options);
    this.kind = kind;
    this.name = 'JsonCompletionError';
  }
}

/** JSON-object completions from any OpenAI-compatible chat-completions endpoint, checked by a schema. */
export class JsonCompletions {
  private readonly client: OpenAI;

  private readonly opts: JsonCompletionsOptions;
  constructor(opts: JsonCompletionsOptions) {
    this.opts = opts;
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: opts.apiKey,
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
    });
  }

  async complete<T extends z.ZodType>(messages: CompletionMessage[], schema: T): Promise<z.infer<T>> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create({
        model: this.opts.model,
        messages,
        response_format: { type: 'json_object' },
      });
    } catch (err) {
      // The client's errors carry status and the endpoint's text, never our prompt.
      throw new JsonCompletionError('upstream', `chat completion failed: ${describe(err)}`, { cause: err });
    }
    if (completion.usage) {
      this.opts.onUsage?.({
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
      });
    }
    const text = completion.choices[0]?.message.content;
    if (!text) throw new JsonCompletionError('invalidOutput', 'the completion has no content');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new JsonCompletionError('invalidOutput', 'the completion is not JSON');
    }
    const result = schema.safeParse(parsed);
    if (!result.success) {
      // Paths and issue codes only: the values may be the owner's words or profile text.
      const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}:${i.code}`).join(', ');
      throw new JsonCompletionError('invalidOutput', `the completion does not match its schema (${where})`);
    }
    return result.data;
  }
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError) return `${err.name} ${err.status ?? ''}`.trim();
  return err instanceof Error ? err.name : 'unknown error';
}
