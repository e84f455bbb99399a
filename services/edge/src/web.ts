import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/**
 * The web frontend's policy (issue 14, ADR 0020): every script and style is a bundled file of this
 * origin (no inline script, nothing from the internet); the API and the `/oan` socket are this
 * origin too. Images may come from the object store's signed URLs (§4.8), which live on another origin.
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

/** The pages of the single-page app: each answers index.html and the app routes by path (A29 webUrls). */
const PAGES = [
  '/',
  '/signin',
  '/gofers/*',
  '/threads/*',
  '/conversations',
  '/conversations/*',
  '/connectors',
];

/**
 * Serves the built frontend (web/dist, built by infra/web.ts) at `/`, beside /api and /socket.io.
 * Without a build the edge runs as before and says so once.
 */
export async function registerWeb(app: FastifyInstance, dir: string): Promise<void> {
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
  });
}
