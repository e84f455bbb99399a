import Fastify, { type FastifyInstance } from 'fastify';

/** A request to `POST /v1/chat/completions`, as an OpenAI-compatible client sends it. */
export interface ChatRequest {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string };
}
export interface ChatReply {
  status: number;
  body: unknown;
}
export type ChatResponder = (body: ChatRequest) => ChatReply | Promise<ChatReply>;

/** A 200 chat completion whose assistant message is `content`. */
export const chatCompletion = (content: string): ChatReply => ({
  status: 200,
  body: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'fake-model',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  },
});
/** A completion whose content is `out` as JSON (JSON mode). */
export const chatAnswer =
  (out: unknown): ChatResponder =>
  () =>
    chatCompletion(JSON.stringify(out));
export const chatServerError: ChatResponder = () => ({ status: 500, body: { error: { message: 'boom' } } });

/**
 * A local stand-in for an OpenAI-compatible endpoint (a boundary we do not own): records every request
 * and answers from `script`, one responder per request; an exhausted script falls back to `responder`
 * (for callers whose number and order of requests the test does not fix), and without one answers 500.
 */
export class FakeChatCompletions {
  readonly recorded: { headers: Record<string, unknown>; body: ChatRequest }[] = [];
  script: ChatResponder[] = [];
  responder: ChatResponder | null = null;

  private readonly app: FastifyInstance = Fastify({ forceCloseConnections: true });
  baseUrl = '';

  private constructor() {
    this.app.post('/v1/chat/completions', async (req, reply) => {
      this.recorded.push({ headers: req.headers, body: req.body as ChatRequest });
      const res = await (this.script.shift() ?? this.responder ?? chatServerError)(req.body as ChatRequest);
      return reply.code(res.status).send(res.body);
    });
  }

  static async start(): Promise<FakeChatCompletions> {
    const fake = new FakeChatCompletions();
    fake.baseUrl = `${await fake.app.listen({ host: '127.0.0.1', port: 0 })}/v1`;
    return fake;
  }

  reset(): void {
    this.recorded.length = 0;
    this.script = [];
    this.responder = null;
  }

  close(): Promise<void> {
    return this.app.close();
  }
}
