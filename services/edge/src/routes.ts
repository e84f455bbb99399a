import type { EdgeConfig } from './config';

/** Where a route group goes: one service's URL, or the gateway pool (round robin). */
export type Upstream = 'AUTH_URL' | 'GOFERS_URL' | 'MATCHING_URL' | 'CONVERSATIONS_URL' | 'GATEWAYS';

export interface ApiRoute {
  /** Matches the prefix itself and everything under it; the path is forwarded unchanged. */
  prefix: string;
  upstream: Upstream;
}

/**
 * The public /api/v1 surface by owning service (docs/architecture.md). A new service is one line
 * here plus its URL variable in config.ts; a line whose URL is unset is not registered (404).
 */
export const API_ROUTES: readonly ApiRoute[] = [
  { prefix: '/api/v1/auth', upstream: 'AUTH_URL' },
  { prefix: '/api/v1/api-keys', upstream: 'AUTH_URL' },
  { prefix: '/api/v1/events', upstream: 'GATEWAYS' },
  { prefix: '/api/v1/gofers', upstream: 'GOFERS_URL' },
  { prefix: '/api/v1/threads', upstream: 'MATCHING_URL' },
  { prefix: '/api/v1/match-requests', upstream: 'MATCHING_URL' },
  { prefix: '/api/v1/conversations', upstream: 'CONVERSATIONS_URL' },
];

/** The URL of a fixed upstream, or undefined when that service is not configured. */
export function upstreamUrl(config: EdgeConfig, upstream: Exclude<Upstream, 'GATEWAYS'>): string | undefined {
  return config[upstream];
}
