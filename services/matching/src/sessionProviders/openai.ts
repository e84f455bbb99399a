import { JsonCompletionError, JsonCompletions, type JsonCompletionsOptions } from '@oan/completions';
import { z } from '@oan/config';
import { sessionMetrics } from './metrics.ts';
import { buildCardPrompt, buildTurnPrompt, type PromptMessage } from './prompt.ts';
import {
  SessionProviderError,
  type CardFields,
  type NextTurnInput,
  type SessionProvider,
  type SummaryCardInput,
} from './provider.ts';

export type OpenAiSessionOptions = Omit<JsonCompletionsOptions, 'onUsage'>;

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
  private readonly completions: JsonCompletions;

  constructor(opts: OpenAiSessionOptions) {
    this.completions = new JsonCompletions({
      ...opts,
      onUsage: (u) => {
        sessionMetrics.tokens.inc({ kind: 'prompt' }, u.promptTokens);
        sessionMetrics.tokens.inc({ kind: 'completion' }, u.completionTokens);
      },
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
    try {
      return await this.completions.complete(messages, schema);
    } catch (err) {
      if (!(err instanceof JsonCompletionError)) throw err;
      const code = err.kind === 'upstream' ? 'SESSION_UPSTREAM' : 'SESSION_INVALID_OUTPUT';
      throw new SessionProviderError(code, err.message, { cause: err });
    }
  }
}
