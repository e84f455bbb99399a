import {
  commonEnv,
  envHttpUrl,
  envList,
  envOptional,
  envPort,
  llmEnv,
  loadConfig,
  refineLlmEnv,
  z,
} from '@oan/config';
import { trustProxyList } from '@oan/http';
import { refineStorageEnv, storageEnv } from '@oan/storage';
import { a2aPushEnv, refineA2aPushEnv } from './a2a/push/config.ts';

/** The gofers process: the common variables, the brain's, and object storage's (libs/storage). */
export const gofersEnv = commonEnv
  .extend({
    GOFERS_PORT: envPort(8182),
    /** The brain's provider (src/brain): deterministic and offline, or any OpenAI-compatible endpoint. */
    ...llmEnv.shape,
    ...storageEnv.shape,
    /**
     * No adapter unless one is asked for (then the upload routes are 404 and attachmentIds a
     * 400). The fleet and docker-compose choose `fs` / `s3` explicitly.
     */
    STORAGE_DRIVER: z.enum(['none', 'fs', 's3']).default('none'),
    /**
     * ADR 0023: the agent relay's base URLs (the agents replicas, ws:// or http://) where
     * published Gofers announce. Unset: Gofers cannot be published (the relay routes are 404).
     */
    GOFER_RELAY_URLS: envOptional(envList),
    /** Seals the Gofers' relay keys in `gofers.relay_agents`; unset, it is derived from JWT_SECRET. */
    GOFER_RELAY_KEY_SECRET: envOptional(z.string().min(32, 'must be at least 32 characters')),
    /** INPUTs a relay caller may send one Gofer per minute. */
    GOFER_RELAY_INPUTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
    /** Relay turns one published Gofer answers per hour over all its callers (a caller key is free). */
    GOFER_RELAY_TURNS_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(200),
    /** Relay turns all the published Gofers of one owner account answer per hour. */
    GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(500),
    /** A2A push notifications (src/a2a/push): where they may go, timeouts, retries. */
    ...a2aPushEnv.shape,
    /**
     * ADR 0035: the fleet's public origin (the edge), in the A2A agent cards' URLs. Unset: the
     * web base URL (OAN_WEB_BASE_URL, the same origin under `npm run dev` and compose), else
     * http://127.0.0.1:8080.
     */
    GOFER_A2A_PUBLIC_URL: envOptional(envHttpUrl),
    /** A2A turns one caller identity may ask one Gofer per minute. */
    GOFER_A2A_CALLER_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
    /** A2A turns one client address may ask one Gofer per minute, whatever identities it declares. */
    GOFER_A2A_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(30),
    /**
     * A2A tasks still submitted or working whose row has not changed for this long lost their turn
     * to a crash: the recovery sweep (src/a2a/recovery.ts) ends them. Longer than a turn can take
     * (the brain's timeout and retries).
     */
    GOFER_A2A_STALE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
    /** QA only (fault tests), refused in production: each A2A turn's brain call waits this long first. */
    GOFER_A2A_QA_TURN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
    /**
     * QA only (fault tests), refused in production: `exit-after-record` makes the process SIGKILL
     * itself right after an A2A turn is recorded in the owner's role-chat, before the task completes.
     */
    GOFER_A2A_QA_FAULT: envOptional(z.enum(['exit-after-record'])),
    /** Peers whose X-Forwarded-For is believed (the edge): an A2A caller without a token is its address. */
    TRUST_PROXY: trustProxyList,
  })
  .superRefine((env, ctx) => {
    refineLlmEnv(env, ctx);
    refineStorageEnv(env, ctx);
    refineA2aPushEnv(env, ctx);
    if (env.NODE_ENV === 'production') {
      const qa = {
        GOFER_A2A_QA_TURN_DELAY_MS: env.GOFER_A2A_QA_TURN_DELAY_MS > 0,
        GOFER_A2A_QA_FAULT: !!env.GOFER_A2A_QA_FAULT,
      };
      for (const [key, set] of Object.entries(qa))
        if (set) ctx.addIssue({ code: 'custom', path: [key], message: 'must not be set in production' });
    }
  });

export type GofersConfig = z.infer<typeof gofersEnv>;

/** The public origin of the A2A agent cards, without a trailing slash. */
export const a2aOrigin = (config: Pick<GofersConfig, 'GOFER_A2A_PUBLIC_URL' | 'OAN_WEB_BASE_URL'>) =>
  (config.GOFER_A2A_PUBLIC_URL ?? config.OAN_WEB_BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

/** How often the A2A recovery sweep runs: a quarter of the stale time, within half a second and 30 s. */
export const a2aSweepIntervalMs = (config: Pick<GofersConfig, 'GOFER_A2A_STALE_SECONDS'>) =>
  Math.min(30_000, Math.max(500, config.GOFER_A2A_STALE_SECONDS * 250));

export const loadGofersConfig = (env: NodeJS.ProcessEnv = process.env): GofersConfig =>
  loadConfig(gofersEnv, env);
