import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { EdgeConfig } from './config.ts';

/**
 * The web frontend's policy (ADR 0020): every script and style is a bundled file of this
 * origin (no inline script, nothing from the internet); the API and the `/oan` socket are this
 * origin too. Images may come from the object store's signed URLs, which live on another origin.
 */
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob: http: https:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The pages of the single-page app: each answers index.html and the app routes by path (the `webUrl` forms `/gofers/<id>` and `/threads/<id>`). */
const PAGES = [
  '/',
  '/signin',
  // Where Google sends the operator back, the ID token in the fragment (which no server sees).
  '/signin/google',
  '/gofers/*',
  '/threads/*',
  '/conversations',
  '/conversations/*',
  '/connectors',
  '/runtimes',
  '/runtimes/*',
];

/**
 * What the page needs to know of the fleet before sign-in, public by nature (`GET /config.json`):
 * whether Google sign-in is offered, and where to send the operator for it. A Google client id is
 * no secret (it is in every authorization URL).
 */
export interface WebConfig {
  google: { clientId: string; authorizationUrl: string } | null;
}

export const webConfigOf = (config: EdgeConfig): WebConfig => ({
  google:
    config.GOOGLE_CLIENT_ID && config.GOOGLE_JWKS_URL
      ? { clientId: config.GOOGLE_CLIENT_ID, authorizationUrl: config.GOOGLE_AUTHORIZATION_URL }
      : null,
});

/**
 * Serves the built frontend (web/dist, built by infra/web.ts) at `/`, beside /api and /socket.io,
 * and its public configuration at `/config.json`. Without a build the edge runs as before and says so once.
 */
export async function registerWeb(app: FastifyInstance, dir: string, config: WebConfig): Promise<void> {
  if (!existsSync(join(dir, 'index.html'))) {
    app.log.warn(
      { dir },
      'no web frontend build: the pages are not served (npm run dev / npm test build it)',
    );
    return;
  }
  await app.register(async (web) => {
    web.addHook('onSend', async (_req, reply, payload) => {
      reply.header('content-security-policy', WEB_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('x-frame-options', 'DENY');
      return payload;
    });
    await web.register(fastifyStatic, {
      root: dir,
      prefix: '/',
      wildcard: false,
      index: false,
      // Hashed names under /assets never change; the page itself is always revalidated.
      setHeaders: (reply, path) => {
        reply.header(
          'cache-control',
          path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    });
    for (const page of PAGES) {
      web.get(page, { schema: { hide: true } }, (_req, reply) => reply.sendFile('index.html'));
    }
    web.get('/config.json', { schema: { hide: true } }, async (_req, reply) => {
      reply.header('cache-control', 'no-cache');
      return config;
    });
  });
}
