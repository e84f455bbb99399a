import { BODY_LIMITS, UPLOAD_BODY_LIMIT } from '@oan/http';
import type { EdgeConfig } from './config.ts';

/** Where a route group goes: one service's replicas (upstreams.ts), or the gateway pool (sticky by sid). */
export type Upstream =
  'AUTH_URL' | 'GOFERS_URL' | 'MATCHING_URL' | 'CONVERSATIONS_URL' | 'RUNTIMES_URL' | 'GATEWAYS';

export interface ApiRoute {
  /** Matches the prefix itself and everything under it; the path is forwarded unchanged. */
  prefix: string;
  upstream: Upstream;
  /**
   * The largest body the owner accepts (its `bodyLimit`); the edge refuses a larger one itself
   * (proxy.ts), since the owner's own 413 is sent before the body is read and can be lost with the
   * connection it closes. The same constant the owner passes (libs/http BODY_LIMITS).
   */
  bodyLimit: number;
}

/** The multipart upload endpoints, which stream the file instead of holding it to `bodyLimit`. */
const UPLOAD_PATHS: readonly RegExp[] = [
  /^\/api\/v1\/gofers\/[^/]+\/(?:attachments|photos)\/?$/,
  /^\/api\/v1\/conversations\/[^/]+\/attachments\/?$/,
];

/**
 * The public /api/v1 surface by owning service (docs/architecture.md). A new service is one line
 * here plus its URL variable in config.ts; a line whose URL is unset is not registered (404).
 */
export const API_ROUTES: readonly ApiRoute[] = [
  { prefix: '/api/v1/auth', upstream: 'AUTH_URL', bodyLimit: BODY_LIMITS.auth },
  { prefix: '/api/v1/api-keys', upstream: 'AUTH_URL', bodyLimit: BODY_LIMITS.auth },
  { prefix: '/api/v1/webhooks', upstream: 'AUTH_URL', bodyLimit: BODY_LIMITS.auth },
  { prefix: '/api/v1/events', upstream: 'GATEWAYS', bodyLimit: BODY_LIMITS.gateway },
  { prefix: '/api/v1/gofers', upstream: 'GOFERS_URL', bodyLimit: BODY_LIMITS.gofers },
  { prefix: '/api/v1/threads', upstream: 'MATCHING_URL', bodyLimit: BODY_LIMITS.matching },
  { prefix: '/api/v1/match-requests', upstream: 'MATCHING_URL', bodyLimit: BODY_LIMITS.matching },
  { prefix: '/api/v1/conversations', upstream: 'CONVERSATIONS_URL', bodyLimit: BODY_LIMITS.conversations },
  // The key directory of sealed messages (docs/sealed-messages.md) is the conversations service's.
  { prefix: '/api/v1/keys', upstream: 'CONVERSATIONS_URL', bodyLimit: BODY_LIMITS.conversations },
  { prefix: '/api/v1/runtimes', upstream: 'RUNTIMES_URL', bodyLimit: BODY_LIMITS.runtimes },
  // ADR 0035: published Gofers as A2A agents (their cards and JSON-RPC), with no credential.
  { prefix: '/a2a', upstream: 'GOFERS_URL', bodyLimit: BODY_LIMITS.a2a },
];

/**
 * The body limit for a request to `url` (path and query) under `route`: the upload allowance only
 * for a multipart body to an upload path (anything else there is parsed, and limited, as JSON).
 */
export function bodyLimitFor(route: ApiRoute, url: string, contentType = 'multipart/form-data'): number {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const multipart = /^multipart\/form-data\b/i.test(contentType.trim());
  return multipart && UPLOAD_PATHS.some((p) => p.test(path)) ? UPLOAD_BODY_LIMIT : route.bodyLimit;
}

/** The URLs of a service's replicas, or undefined when that service is not configured. */
export function upstreamUrls(
  config: EdgeConfig,
  upstream: Exclude<Upstream, 'GATEWAYS'>,
): readonly string[] | undefined {
  return config[upstream];
}
