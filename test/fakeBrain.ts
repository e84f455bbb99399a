import { chatCompletion, FakeChatCompletions, type ChatReply, type ChatRequest } from '@oan/testing';

/**
 * The fleet's Gofer brain and session on an OpenAI-compatible endpoint played by a local fake that
 * records every prompt, for tests that must show what the model was (never) given. The fake answers
 * so that `matchTwoAccounts` runs on it: every Gofer gets the same complete profile and is ready for
 * pairing at its first answer, so any two Gofers pair; session turns and cards are fixed texts.
 */
const PROFILE = {
  name: 'Fake Scout',
  description: 'Backend engineering with TypeScript, Postgres and Kafka for payment APIs.',
  values: ['remote work'],
  demands: ['Backend engineering with TypeScript, Postgres and Kafka for payment APIs.'],
};

const answer = (out: unknown): ChatReply => chatCompletion(JSON.stringify(out));

function model(body: ChatRequest): ChatReply {
  const system = body.messages[0]?.content ?? '';
  if (system.includes('Your session with another Gofer has ended'))
    return answer({
      cardTitle: 'A match',
      summary: 'The other side offers what you look for.',
      otherPartyHighlights: ['TypeScript'],
      actionItems: ['Request the match'],
      matchRecommendation: 'strong',
      pairReason: 'Demands and offers overlap.',
    });
  if (system.includes('Gofer-to-Gofer session')) return answer({ content: 'We build payment APIs.' });
  return answer({
    content: 'Looking for matches now.',
    pendingQuery: false,
    responseConstraints: null,
    profile: PROFILE,
    discoveryStatus: 'ready_for_pairing',
  });
}

/** The fake and the fleet environment that points the brain and the session at it. */
export async function startFakeBrain(): Promise<{ fake: FakeChatCompletions; env: Record<string, string> }> {
  const fake = await FakeChatCompletions.start();
  fake.responder = model;
  const env = {
    GOFER_BRAIN: 'openai',
    OPENAI_BASE_URL: fake.baseUrl,
    OPENAI_API_KEY: 'sk-fake-brain',
    OPENAI_MODEL: 'fake-model',
    OPENAI_MAX_RETRIES: '0',
    OPENAI_TIMEOUT_MS: '5000',
  };
  return { fake, env };
}

/** Every prompt the fake was sent, one text each (all its messages). */
export const promptsOf = (fake: FakeChatCompletions): string[] =>
  fake.recorded.map((r) => r.body.messages.map((m) => `${m.role}: ${m.content}`).join('\n'));
