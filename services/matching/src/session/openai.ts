import OpenAI from 'openai';
import { z } from '@oan/config';
import { sessionMetrics } from './metrics';
import { buildCardPrompt, buildTurnPrompt, type PromptMessage } from './prompt';
import {
  SessionProviderError,
  type CardFields,
  type NextTurnInput,
  type SessionProvider,
  type SummaryCardInput,
} from './provider';

export interface OpenAiSessionOptions {
  /** An OpenAI-compatible endpoint root, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Per HTTP request. */
  timeoutMs: number;
  /** The client's own retries of connection errors, timeouts, 408/409/429 and 5xx. */
  maxRetries: number;
}

const text = (max: number) => z.string().trim().min(1).max(max);

export const turnOutputSchema = z.object({ content: text(4000) });

export const cardOutputSchema = z.object({
  cardTitle: text(200),
  summary: text(4000),
  otherPartyHighlights: z.array(text(500)).max(10),
  actionItems: z.array(text(500)).max(10),
  matchRecommendation: z.enum(['strong', 'possible', 'weak']),
  pairReason: text(2000),
});

/** A session on any OpenAI-compatible chat-completions endpoint; replies must be JSON objects. */
export class OpenAiSessionProvider implements SessionProvider {
  readonly kind = 'openai';
  readonly deterministic = false;
  private readonly client: OpenAI;

  constructor(private readonly opts: OpenAiSessionOptions) {
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: opts.apiKey,
      timeout: opts.timeoutMs,
      maxRetries: opts.maxRetries,
    });
  }

  async nextTurn(input: NextTurnInput): Promise<{ content: string }> {
    const out = await this.complete(buildTurnPrompt(input), turnOutputSchema);
    return { content: out.content };
  }

  async summaryCard(input: SummaryCardInput): Promise<CardFields> {
    const out = await this.complete(buildCardPrompt(input), cardOutputSchema);
    return {
      content: `${out.cardTitle}\n${out.summary}`,
      cardTitle: out.cardTitle,
      summary: out.summary,
      // The counterpart's current public name, from its profile, not from the model.
      opponentRoleName: input.counterpart.name,
      otherPartyHighlights: out.otherPartyHighlights,
      actionItems: out.actionItems,
      matchRecommendation: out.matchRecommendation,
      pairReason: out.pairReason,
    };
  }

  private async complete<T extends z.ZodType>(messages: PromptMessage[], schema: T): Promise<z.infer<T>> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create({
        model: this.opts.model,
        messages,
        response_format: { type: 'json_object' },
      });
    } catch (err) {
      // The client's errors carry status and the endpoint's text, never our prompt.
      throw new SessionProviderError('SESSION_UPSTREAM', `chat completion failed: ${describe(err)}`, {
        cause: err,
      });
    }
    if (completion.usage) {
      sessionMetrics.tokens.inc({ kind: 'prompt' }, completion.usage.prompt_tokens);
      sessionMetrics.tokens.inc({ kind: 'completion' }, completion.usage.completion_tokens);
    }
    const raw = completion.choices[0]?.message.content;
    if (!raw) throw new SessionProviderError('SESSION_INVALID_OUTPUT', 'the completion has no content');
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new SessionProviderError('SESSION_INVALID_OUTPUT', 'the completion is not JSON');
    }
    const result = schema.safeParse(parsed);
    if (!result.success) {
      // Paths and issue codes only: the values may be profile text.
      const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}:${i.code}`).join(', ');
      throw new SessionProviderError('SESSION_INVALID_OUTPUT', `the completion does not match (${where})`);
    }
    return result.data;
  }
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError) return `${err.name} ${err.status ?? ''}`.trim();
  return err instanceof Error ? err.name : 'unknown error';
}
