import { commonEnv, envBool, envPort, idSecret, loadConfig, z } from '@oan/config';
import { trustProxyList } from '@oan/http';

/** Unset and empty are the same thing for optional variables (`FOO=` in an env file). */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/**
 * `email=code,email=code`: QA accounts that sign in with a fixed code and no mailbox (test
 * bypass). Emails are normalized like every other email.
 */
const testLoginCodes = z.string().transform((raw, ctx) => {
  const codes = new Map<string, string>();
  for (const pair of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = pair.lastIndexOf('=');
    const email = pair.slice(0, at).trim().toLowerCase();
    const code = pair.slice(at + 1).trim();
    if (at <= 0 || !z.email().safeParse(email).success || code === '') {
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated email=code pairs' });
      return z.NEVER;
    }
    codes.set(email, code);
  }
  return codes;
});

export const authEnv = commonEnv
  .extend({
    AUTH_PORT: envPort(8181),
    /** Keys the id of a new account, so an email does not tell anyone its account's id. */
    ID_SECRET: idSecret,
    SMTP_URL: z.string().url().default('smtp://127.0.0.1:2525'),
    MAIL_FROM: z.string().min(3).default('OAN <no-reply@openagentnetwork.ai>'),
    OAN_TEST_LOGIN_CODES: optional(testLoginCodes),
    GOOGLE_JWKS_URL: optional(z.string().url()),
    GOOGLE_CLIENT_ID: optional(z.string().min(1)),
    GOOGLE_ISSUER: z.string().min(1).default('https://accounts.google.com'),
    /** Operator tokens are short-lived; at most a day. */
    JWT_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(86_400),
    /** Failed email-code or pairing-code attempts one client address may make per window (then 429). */
    AUTH_MAX_FAILED_ATTEMPTS: z.coerce.number().int().min(1).max(100_000).default(30),
    AUTH_FAILED_ATTEMPTS_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
    /**
     * Wrong email codes one email may get per window, over all its codes and addresses (then 429):
     * a new code does not give the guesser five more tries.
     */
    AUTH_MAX_FAILED_PER_EMAIL: z.coerce.number().int().min(1).max(100_000).default(10),
    AUTH_EMAIL_FAILED_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
    /**
     * `request-code` calls (each may send a mail) per client address and for the whole deployment
     * per window; past either the call is a 429 and nothing is sent.
     */
    AUTH_MAX_CODE_REQUESTS_PER_ADDRESS: z.coerce.number().int().min(1).max(1_000_000).default(50),
    AUTH_MAX_CODE_REQUESTS: z.coerce.number().int().min(1).max(10_000_000).default(2000),
    AUTH_CODE_REQUESTS_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
    /**
     * The peers whose X-Forwarded-For is believed (the edge, which writes the address it saw):
     * comma-separated addresses or CIDR blocks, `loopback` for 127.0.0.0/8 and ::1. Any other peer
     * is the client itself, so a host beside auth cannot pose as another client.
     */
    TRUST_PROXY: trustProxyList,
    // Webhooks (ADR 0018): the delivery loop runs in every auth process unless switched off.
    WEBHOOK_DELIVERY: z
      .enum(['on', 'off'])
      .default('on')
      .transform((v) => v === 'on'),
    /** QA only (`npm run dev`, tests): http URLs and loopback addresses; refused in production. */
    WEBHOOK_ALLOW_LOOPBACK: envBool,
    /** A 2xx must arrive within this. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
    /** Retries: exponential from the base up to the cap (jittered); disabled after the give-up period. */
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5_000),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(7_200_000),
    WEBHOOK_GIVE_UP_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(30 * 86_400_000)
      .default(86_400_000),
    /** How often due endpoints are looked for besides the push stream's wake-ups. */
    WEBHOOK_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(1_000),
  })
  .superRefine((env, ctx) => {
    // STYLE habit 5: the only behaviour keyed on NODE_ENV is refusing QA-only settings.
    if (env.NODE_ENV === 'production' && env.OAN_TEST_LOGIN_CODES && env.OAN_TEST_LOGIN_CODES.size > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['OAN_TEST_LOGIN_CODES'],
        message: 'must not be set in production',
      });
    }
    if (env.NODE_ENV === 'production' && env.WEBHOOK_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBHOOK_ALLOW_LOOPBACK'],
        message: 'must not be set in production',
      });
    }
  });

export type AuthConfig = z.infer<typeof authEnv>;

export const loadAuthConfig = (env: NodeJS.ProcessEnv = process.env): AuthConfig => loadConfig(authEnv, env);
