import { envBool, envList, envPort, loadConfig, z } from '@oan/config';

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL')
  .transform((u) => u.replace(/\/+$/, ''));
const optionalUrl = httpUrl.optional();

/**
 * The edge reads no database and signs nothing, so it does not take the fleet's common variables.
 * `GATEWAY_IDS` (optional) names the gateways in `GATEWAY_URLS` order; by default gateway i is
 * `g<i+1>`, which is what each must then run with as its `GATEWAY_ID` (sticky polling, app.ts).
 */
export const edgeEnv = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    ENABLE_OPEN_API: envBool,
    HOST: z.string().default('127.0.0.1'),
    OAN_PORT: envPort(8080),
    AUTH_URL: httpUrl.default('http://127.0.0.1:8181'),
    GATEWAY_URLS: envList.pipe(z.array(httpUrl).min(1)).default(['http://127.0.0.1:8191']),
    GATEWAY_IDS: envList.pipe(z.array(z.string().regex(/^[a-z0-9]{1,8}$/))).optional(),
    // Later services: their routes exist only once their URL is configured (routes.ts).
    GOFERS_URL: optionalUrl,
    MATCHING_URL: optionalUrl,
    CONVERSATIONS_URL: optionalUrl,
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
