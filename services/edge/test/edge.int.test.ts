import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The gateway's own test fixtures: the edge is tested against real gateways, not stubs.
import {
  commitAndPublish,
  connect,
  envelope,
  insertAccount,
  insertApiKey,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
  type TestClient,
} from '@oan/gateway/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

/** A stand-in for the auth service that echoes what reached it. */
async function stubAuth(): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  const echo = async (req: {
    url: string;
    method: string;
    headers: Record<string, unknown>;
    body?: unknown;
  }) => ({
    upstream: 'auth',
    method: req.method,
    url: req.url,
    requestId: req.headers['x-request-id'],
    forwardedFor: req.headers['x-forwarded-for'],
    ...(req.headers['x-oan-internal'] || req.headers['x-oan-command-id']
      ? { fleetOnly: [req.headers['x-oan-internal'], req.headers['x-oan-command-id']] }
      : {}),
    body: req.body ?? null,
  });
  app.post('/api/v1/auth/oan/email/request-code', echo);
  app.get('/api/v1/api-keys', echo);
  app.delete('/api/v1/api-keys/:id', async (_req, reply) => reply.status(204).send());
  // Served by auth for the gateways only: the edge must never reach it.
  app.post('/internal/connector-notices', echo);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

async function startEdge(env: Record<string, string>) {
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      ...env,
    }),
    metrics: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

let fleet: Fleet;
let g1: RunningGateway;
let g2: RunningGateway;
let auth: Awaited<ReturnType<typeof stubAuth>>;
let edge: Awaited<ReturnType<typeof startEdge>>;
/** Engine.IO requests each gateway received, by the sid they carried. */
const seenSids: Record<string, string[]> = { g1: [], g2: [] };

beforeAll(async () => {
  fleet = await openFleet();
  g1 = await startGateway(fleet, { id: 'g1' });
  g2 = await startGateway(fleet, { id: 'g2', metrics: false });
  for (const [id, gw] of [
    ['g1', g1],
    ['g2', g2],
  ] as const) {
    gw.app.server.prependListener('request', (req) => {
      const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sid');
      if (sid) seenSids[id]?.push(sid);
    });
  }
  auth = await stubAuth();
  edge = await startEdge({
    ENABLE_OPEN_API: 'true',
    AUTH_URL: auth.url,
    GATEWAY_URLS: `${g1.url},${g2.url}`,
  });
});

afterAll(async () => {
  await edge?.app.close();
  await auth?.app.close();
  await g1?.close();
  await g2?.close();
  await fleet?.close();
});

async function account() {
  const id = await insertAccount(fleet.orm);
  return { id, key: (await insertApiKey(fleet.orm, id)).key };
}

describe('the public origin', () => {
  it('answers GET /api/health without auth', async () => {
    const res = await fetch(`${edge.url}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('does not route auth’s internal connector-notice endpoint, however the path is written', async () => {
    for (const path of [
      '/internal/connector-notices',
      '//internal/connector-notices',
      '/api/v1/auth/../../internal/connector-notices',
      '/api/v1/auth/%2e%2e/%2e%2e/internal/connector-notices',
    ]) {
      const res = await fetch(`${edge.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).not.toMatchObject({ upstream: 'auth' });
    }
  });

  it('routes /api/v1/events* to a gateway, tolerating a doubled slash', async () => {
    const a = await account();
    const headers = { authorization: `Bearer ${a.key}` };
    for (const path of ['//api/v1/events/cursor', '/api/v1/events/cursor']) {
      const res = await fetch(`${edge.url}${path}`, { headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ seq: '0' });
    }
    const bad = await fetch(`${edge.url}/api/v1/events?limit=201`, { headers });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('routes auth and api-keys paths to auth unchanged, propagating x-request-id', async () => {
    const res = await fetch(`${edge.url}/api/v1/auth/oan/email/request-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-42' },
      body: JSON.stringify({ email: 'a@example.test' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('trace-42');
    expect(await res.json()).toEqual({
      upstream: 'auth',
      method: 'POST',
      url: '/api/v1/auth/oan/email/request-code',
      requestId: 'trace-42',
      forwardedFor: '127.0.0.1',
      body: { email: 'a@example.test' },
    });
    const keys = await fetch(`${edge.url}/api/v1/api-keys`);
    expect(await keys.json()).toMatchObject({ url: '/api/v1/api-keys', requestId: expect.any(String) });
    const del = await fetch(`${edge.url}/api/v1/api-keys/abc`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
  });

  it('replaces a client-written X-Forwarded-For with the address the edge saw', async () => {
    // Auth and the relay key their limits on this hop: a client must not be able to choose it.
    const res = await fetch(`${edge.url}/api/v1/auth/oan/email/request-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9, 198.51.100.1' },
      body: JSON.stringify({ email: 'a@example.test' }),
    });
    expect(await res.json()).toMatchObject({ forwardedFor: '127.0.0.1' });
  });

  it('never passes on the headers only the fleet sends one another', async () => {
    const res = await fetch(`${edge.url}/api/v1/auth/oan/email/request-code`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-oan-internal': 'a guess',
        'x-oan-command-id': 'runtimes/x/1',
      },
      body: JSON.stringify({ email: 'a@example.test' }),
    });
    const echoed = (await res.json()) as Record<string, unknown>;
    expect(echoed).toMatchObject({ upstream: 'auth' });
    expect(echoed).not.toHaveProperty('fleetOnly');
  });

  it.each(['/api/v1/nope', '/api/v1/gofers', '/api/v1/eventsx', '/api/v2/events'])(
    'answers 404 with the error body for %s',
    async (path) => {
      const res = await fetch(`${edge.url}${path}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: expect.any(String), code: 'NOT_FOUND' });
    },
  );

  it('answers 503 SERVICE_UNAVAILABLE when the upstream is down', async () => {
    const lonely = await startEdge({
      ENABLE_OPEN_API: 'true',
      AUTH_URL: 'http://127.0.0.1:9',
      GATEWAY_URLS: 'http://127.0.0.1:9',
    });
    try {
      for (const [method, path] of [
        ['POST', '/api/v1/auth/oan/email/request-code'],
        ['GET', '/api/v1/events/cursor'],
      ]) {
        const res = await fetch(`${lonely.url}${path}`, { method });
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
      }
    } finally {
      await lonely.app.close();
    }
  });
});

describe('Socket.IO through the edge', () => {
  const receives = async (client: TestClient, accountId: string, seq: number) => {
    await commitAndPublish(fleet, accountId, envelope(seq));
    await waitFor(() => expect(client.events.map((e) => e.seq)).toContain(String(seq)));
  };

  it('a websocket-only client connects to /oan and receives a push', async () => {
    const a = await account();
    const client = await connect(edge.url, { token: a.key }, { transports: ['websocket'] });
    await receives(client, a.id, 1);
    client.socket.close();
  });

  it('default clients poll, upgrade on the gateway that owns their session, and receive a push', async () => {
    const a = await account();
    // Round robin spreads them over both gateways; an upgrade sent to the wrong one would fail.
    const clients = await Promise.all([1, 2, 3, 4].map(() => connect(edge.url, { token: a.key })));
    for (const c of clients) await waitFor(() => expect(c.socket.io.engine.transport.name).toBe('websocket'));
    await commitAndPublish(fleet, a.id, envelope(1));
    for (const c of clients) await waitFor(() => expect(c.events.map((e) => e.seq)).toEqual(['1']));
    clients.forEach((c) => c.socket.close());
  });

  it('sends every long-polling request of a session to the gateway that owns its sid', async () => {
    const a = await account();
    const clients = await Promise.all(
      [1, 2, 3, 4].map(() => connect(edge.url, { token: a.key }, { transports: ['polling'] })),
    );
    const owners = clients.map((c) => c.socket.io.engine.id.split('.')[0]);
    expect(new Set(owners)).toEqual(new Set(['g1', 'g2'])); // round robin spread the sessions
    for (let seq = 1; seq <= 3; seq++) {
      await commitAndPublish(fleet, a.id, envelope(seq));
    }
    for (const c of clients) await waitFor(() => expect(c.events.map((e) => e.seq)).toEqual(['1', '2', '3']));
    for (const [id, sids] of Object.entries(seenSids)) {
      expect(sids.length).toBeGreaterThan(0);
      for (const sid of sids) expect(sid.startsWith(`${id}.`)).toBe(true);
    }
    clients.forEach((c) => c.socket.close());
  });
});

describe('when ENABLE_OPEN_API is off', () => {
  it('every /api/v1 path is 404 and health still answers', async () => {
    const off = await startEdge({ AUTH_URL: auth.url, GATEWAY_URLS: `${g1.url},${g2.url}` });
    try {
      for (const path of [
        '/api/v1/events/cursor',
        '/api/v1/auth/oan/email/request-code',
        '/api/v1/api-keys',
      ]) {
        const res = await fetch(`${off.url}${path}`);
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
      }
      expect((await fetch(`${off.url}/api/health`)).status).toBe(200);
    } finally {
      await off.app.close();
    }
  });
});

describe('when one gateway is down', () => {
  it('serves every GET /events* from the live one (a failed backfill would lose events)', async () => {
    const { freePort } = await import('@oan/testing');
    const dead = `http://127.0.0.1:${await freePort()}`;
    const edge2 = await startEdge({
      ENABLE_OPEN_API: 'true',
      AUTH_URL: auth.url,
      GATEWAY_URLS: `${dead},${g1.url}`,
    });
    try {
      const a = await account();
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${edge2.url}/api/v1/events/cursor`, {
          headers: { authorization: `Bearer ${a.key}` },
        });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ seq: '0' });
      }
    } finally {
      await edge2.app.close();
    }
  });
});
