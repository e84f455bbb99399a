import { z } from 'zod';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses `env` with `schema` once, at start-up. A bad or missing variable fails fast with a
 * message that names every offending variable (never its value: it may be a secret).
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

/** `true`/`1`/`yes` → true; anything else (including unset) → false. */
export const envBool = z
  .string()
  .optional()
  .transform((v) => v !== undefined && ['true', '1', 'yes'].includes(v.trim().toLowerCase()));

export const envPort = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

export const envList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string()).min(1));

/**
 * `KAFKA_BROKER_ROUTES=host:port=host:port,…`: where to connect instead of a broker's advertised
 * address (a test puts a proxy between one process and the broker). Unset or empty: no routes.
 */
export const envBrokerRoutes = z
  .string()
  .default('')
  .transform((v, ctx) => {
    const routes: Record<string, string> = {};
    const hostPort = /^[^\s=,:]+:\d{1,5}$/;
    for (const part of v.split(',').map((p) => p.trim())) {
      if (!part) continue;
      const [from, to, ...rest] = part.split('=').map((x) => x.trim());
      if (!from || !to || rest.length > 0 || !hostPort.test(from) || !hostPort.test(to)) {
        ctx.addIssue({ code: 'custom', message: `"${part}" is not <host:port>=<host:port>` });
        return z.NEVER;
      }
      routes[from] = to;
    }
    return routes;
  });

/** Unset and empty are the same thing for optional variables (`FOO=` in an env file). */
export const envOptional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/** An absolute http(s) URL, without a trailing slash. */
export const envHttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an absolute http(s) URL')
  .transform((u) => u.replace(/\/+$/, ''));

/**
 * One service's replicas: absolute http(s) URLs, comma-separated, without trailing slashes. A host
 * name stands for every address it resolves to where the caller resolves it (the edge).
 */
export const envHttpUrls = envList.pipe(z.array(envHttpUrl).min(1));

/**
 * The model provider of the Gofer brain and of Gofer-to-Gofer sessions : the
 * deterministic offline `scripted` one, or any OpenAI-compatible chat-completions endpoint.
 * Check with `refineLlmEnv` in the service's `superRefine`.
 */
export const llmEnv = z.object({
  GOFER_BRAIN: z.enum(['scripted', 'openai']).default('scripted'),
  OPENAI_BASE_URL: envOptional(envHttpUrl),
  /** Self-hosted compatible endpoints often take no key. */
  OPENAI_API_KEY: envOptional(z.string().min(1)),
  OPENAI_MODEL: envOptional(z.string().min(1)),
  OPENAI_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
});

export type LlmConfig = z.infer<typeof llmEnv>;

/** The options of an OpenAI-compatible client, or null when the deployment runs the scripted provider. */
export function openAiOptions(config: LlmConfig): {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
} | null {
  if (config.GOFER_BRAIN === 'scripted') return null;
  if (!config.OPENAI_BASE_URL || !config.OPENAI_MODEL) {
    throw new Error('GOFER_BRAIN=openai needs OPENAI_BASE_URL and OPENAI_MODEL');
  }
  return {
    baseUrl: config.OPENAI_BASE_URL,
    // Self-hosted compatible endpoints often take no key; the client insists on one.
    apiKey: config.OPENAI_API_KEY ?? 'unused',
    model: config.OPENAI_MODEL,
    timeoutMs: config.OPENAI_TIMEOUT_MS,
    maxRetries: config.OPENAI_MAX_RETRIES,
  };
}

/** Refused at start rather than at the first generation: a bad deployment fails before it listens. */
export function refineLlmEnv(env: z.infer<typeof llmEnv>, ctx: z.RefinementCtx): void {
  if (env.GOFER_BRAIN !== 'openai') return;
  for (const key of ['OPENAI_BASE_URL', 'OPENAI_MODEL'] as const) {
    if (!env[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'required when GOFER_BRAIN=openai' });
  }
}

/**
 * The key of the deterministic ids a process derives (account ids from emails, thread ids from two
 * Gofers): without it an id reveals nothing of what it was derived from. Only the processes that
 * derive ids read it (auth, matching); it is not the JWT key, which only token signers hold.
 */
export const idSecret = z.string().min(32, 'must be at least 32 characters');

/** Variables every process of the fleet reads. */
export const commonEnv = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ENABLE_OPEN_API: envBool,
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/oan'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
  /** Prefix of every Redis key and stream of this deployment (lets test fleets share one Redis). */
  REDIS_PREFIX: z.string().default('oan:'),
  KAFKA_BROKERS: envList.default(['127.0.0.1:9092']),
  /**
   * Partitions of the event topics a process creates (the domain topics and `oan.events`), and so how
   * many replicas of the projector and of each reactor can work at once. Chosen when a topic is
   * created and never applied to one that exists: more partitions map keys anew (ADR 0041).
   */
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(256).default(1),
  KAFKA_BROKER_ROUTES: envBrokerRoutes,
  /** Prefix of every topic name (lets test fleets share one broker). */
  TOPIC_PREFIX: z.string().default(''),
  HOST: z.string().default('127.0.0.1'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters'),
  // Empty counts as unset (`OAN_WEB_BASE_URL=` in an env file, compose's `${OAN_WEB_BASE_URL:-}`):
  // envelopes then omit `webUrl`, rather than the whole fleet refusing to start.
  OAN_WEB_BASE_URL: envOptional(envHttpUrl),
});
export type CommonEnv = z.infer<typeof commonEnv>;

export { z };

/**
 * Node flags of every fleet process. kafkajs 2.2.4 sets a negative timer on Node 24, which prints
 * a TimeoutNegativeWarning at each start (tulios/kafkajs#1751, open upstream): that one warning is
 * silenced by name and no other. vitest.config.ts gives them to the test workers (they use kafkajs
 * too); package.json, infra/dev.sh and docker-compose.yml repeat the flag.
 */
export const FLEET_NODE_FLAGS: readonly string[] = ['--disable-warning=TimeoutNegativeWarning'];
