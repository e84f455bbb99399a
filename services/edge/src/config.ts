import { fileURLToPath } from 'node:url';
import { envBool, envList, envOptional, envPort, loadConfig, z } from '@oan/config';

/** The web frontend's build (infra/web.ts writes it). */
const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../web/dist', import.meta.url));

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL')
  .transform((u) => u.replace(/\/+$/, ''));
/**
 * A service's replicas: one URL or several, comma-separated; a host name in one stands for every
 * address it resolves to (upstreams.ts).
 */
const httpUrls = envList.pipe(z.array(httpUrl).min(1));

/**
 * The edge signs nothing and owns no data. It reads the credential view (`DATABASE_URL`,
 * `JWT_SECRET`: which account a credential names) and Redis only for the opt-in connector extensions
 * (idempotency keys, visible limits; ADR 0017). `GATEWAY_IDS` (optional) names the
 * gateways in `GATEWAY_URLS` order; by default gateway i is `g<i+1>`, which is what each must then run
 * with as its `GATEWAY_ID` (sticky polling, app.ts). `GATEWAY_DNS` instead finds the replicas of one
 * name and their ids (docker-compose `--scale`, ADR 0021).
 */
export const edgeEnv = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    ENABLE_OPEN_API: envBool,
    HOST: z.string().default('127.0.0.1'),
    OAN_PORT: envPort(8080),
    /** The edge's own `/metrics` listener (on HOST); unset, the edge serves no metrics. Never the public port. */
    EDGE_METRICS_PORT: envOptional(z.coerce.number().int().min(1).max(65_535)),
    AUTH_URL: httpUrls.default(['http://127.0.0.1:8181']),
    GATEWAY_URLS: envList.pipe(z.array(httpUrl).min(1)).default(['http://127.0.0.1:8191']),
    GATEWAY_IDS: envList.pipe(z.array(z.string().regex(/^[a-z0-9]{1,8}$/))).optional(),
    /**
     * `<host>:<port>`: the gateways are every address `host` resolves to (the replicas of a compose
     * service, `--scale gateway=N`), each learnt with its id from its /health (gateways.ts). Takes the
     * place of GATEWAY_URLS, which is then ignored; GATEWAY_IDS does not go with it.
     */
    GATEWAY_DNS: envOptional(
      z
        .string()
        .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'must be <host>:<port>')
        .transform((v) => {
          const colon = v.lastIndexOf(':');
          return { host: v.slice(0, colon), port: Number(v.slice(colon + 1)) };
        })
        .refine((d) => d.port >= 1 && d.port <= 65_535, 'must name a port 1-65535'),
    ),
    // Later services: their routes exist only once their URL is configured (routes.ts).
    GOFERS_URL: envOptional(httpUrls),
    MATCHING_URL: envOptional(httpUrls),
    CONVERSATIONS_URL: envOptional(httpUrls),
    RUNTIMES_URL: envOptional(httpUrls),
    /** The ConnectOnion agent relay's replicas (services/agents), names resolved as above; unset = no relay routes. */
    AGENTS_URLS: envOptional(httpUrls),
    DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/oan'),
    REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
    REDIS_PREFIX: z.string().default('oan:'),
    /** Required with ENABLE_OPEN_API: the edge resolves OAN JWTs to their account (for the connector extensions). */
    JWT_SECRET: envOptional(z.string().min(32, 'must be at least 32 characters')),
    /** Visible limits (a connector extension): requests per minute per account; unset = no limits (v1). */
    RATE_LIMIT_PER_MINUTE: envOptional(z.coerce.number().int().min(1).max(1_000_000)),
    /**
     * Connections this edge opens to each service (auth, gofers, matching, conversations, each agents
     * replica); a burst beyond them waits in the edge's queue for a free one instead of opening more.
     */
    EDGE_UPSTREAM_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(128),
    /**
     * The same for each gateway, higher: a held long-poll (`GET /events?wait=N`, Socket.IO polling)
     * occupies one for up to 30 s, and past the bound every request to that gateway queues behind them.
     */
    EDGE_GATEWAY_CONNECTIONS: z.coerce.number().int().min(1).max(100_000).default(2048),
    /** The built web frontend served at `/` (not served when the folder holds no build). */
    WEB_DIR: z.string().default(DEFAULT_WEB_DIR),
    /**
     * The sign-in page offers Google when the fleet verifies Google ID tokens, which auth
     * does with both of these set (otherwise Google sign-in is a 400); the edge reads the same two only to say so (`/config.json`).
     */
    GOOGLE_CLIENT_ID: envOptional(z.string().min(1)),
    GOOGLE_JWKS_URL: envOptional(z.string().url()),
    /** The OpenID Connect authorization endpoint the page sends the operator to (Google's by default). */
    GOOGLE_AUTHORIZATION_URL: httpUrl.default('https://accounts.google.com/o/oauth2/v2/auth'),
  })
  .refine((c) => !c.ENABLE_OPEN_API || c.JWT_SECRET !== undefined, {
    message: 'is required when ENABLE_OPEN_API is on',
    path: ['JWT_SECRET'],
  })
  .refine((c) => !c.GATEWAY_DNS || !c.GATEWAY_IDS, {
    message: 'does not go with GATEWAY_DNS (each replica names its id in its /health)',
    path: ['GATEWAY_IDS'],
  })
  .refine((c) => !c.GATEWAY_IDS || c.GATEWAY_IDS.length === c.GATEWAY_URLS.length, {
    message: 'must name every gateway of GATEWAY_URLS, in the same order',
    path: ['GATEWAY_IDS'],
  })
  .refine((c) => !c.GATEWAY_IDS || new Set(c.GATEWAY_IDS).size === c.GATEWAY_IDS.length, {
    message: 'must not repeat an id',
    path: ['GATEWAY_IDS'],
  });
export type EdgeConfig = z.infer<typeof edgeEnv>;

export const loadEdgeConfig = (env: NodeJS.ProcessEnv = process.env): EdgeConfig => loadConfig(edgeEnv, env);
