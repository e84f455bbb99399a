import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The gateway's own test fixtures: the edge is tested against a real gateway, not a stub.
import {
  insertAccount,
  insertApiKey,
  JWT_SECRET,
  jwtFor,
  openFleet,
  startGateway,
  type Fleet,
  type RunningGateway,
} from '@oan/gateway/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

let fleet: Fleet;
let gw: RunningGateway;
const edges: { app: Awaited<ReturnType<typeof buildApp>>; url: string }[] = [];

async function startEdge(env: Record<string, string> = {}) {
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      ENABLE_OPEN_API: 'true',
      JWT_SECRET,
      REDIS_PREFIX: fleet.prefix,
      GATEWAY_URLS: gw.url,
      ...env,
    }),
    metrics: false,
    extensions: { orm: fleet.orm, redis: fleet.redis },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const edge = { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  edges.push(edge);
  return edge;
}

beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet);
});

afterAll(async () => {
  for (const e of edges) await e.app.close();
  await gw?.close();
  await fleet?.close();
});

async function account() {
  const id = await insertAccount(fleet.orm);
  return { id, key: (await insertApiKey(fleet.orm, id)).key };
}

const get = (base: string, path: string, token?: string) =>
  fetch(`${base}/api/v1${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'];

describe('without RATE_LIMIT_PER_MINUTE (v1)', () => {
  it('sends no RateLimit header and never 429s; /limits shows no rate limit', async () => {
    const edge = await startEdge();
    const a = await account();
    for (let i = 0; i < 30; i++) {
      const res = await get(edge.url, '/events/cursor', a.key);
      expect(res.status).toBe(200);
      for (const h of RATE_HEADERS) expect(res.headers.get(h), h).toBeNull();
    }
    const limits = await get(edge.url, '/limits', a.key);
    expect(await limits.json()).toEqual({
      rateLimit: null,
      longPoll: { maxWaitSeconds: 30 },
      idempotency: { retentionSeconds: 86400, maxKeyLength: 255 },
    });
  });
});

describe('with RATE_LIMIT_PER_MINUTE=5 on two edges sharing Redis', () => {
  let one: { url: string };
  let two: { url: string };
  beforeAll(async () => {
    one = await startEdge({ RATE_LIMIT_PER_MINUTE: '5' });
    two = await startEdge({ RATE_LIMIT_PER_MINUTE: '5' });
  });

  it('counts an account’s requests down across both, then answers 429 with Retry-After', async () => {
    const a = await account();
    const remaining: (string | null)[] = [];
    for (const base of [one.url, two.url, one.url, two.url, one.url]) {
      const res = await get(base, '/events/cursor', a.key);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('5');
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      remaining.push(res.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const refused = await get(two.url, '/events/cursor', a.key);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: expect.any(String), code: 'RATE_LIMITED' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('counts an account once whichever credential it uses (API key and JWT)', async () => {
    const a = await account();
    await get(one.url, '/events/cursor', a.key);
    const viaJwt = await get(one.url, '/events/cursor', await jwtFor(a.id));
    expect(viaJwt.headers.get('ratelimit-remaining')).toBe('3');
  });

  it('shows the account its own usage at /limits (the /limits request counted too)', async () => {
    const a = await account();
    await get(one.url, '/events/cursor', a.key);
    await get(two.url, '/events/cursor', a.key);
    const res = await get(one.url, '/limits', a.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
    const body = (await res.json()) as { rateLimit: Record<string, number> };
    expect(body.rateLimit).toMatchObject({ limit: 5, remaining: 2, used: 3, windowSeconds: 60 });
    expect(body.rateLimit.resetSeconds).toBeGreaterThan(0);
  });

  it('does not charge unauthenticated requests to any account, nor send them RateLimit headers', async () => {
    const a = await account();
    for (let i = 0; i < 8; i++) {
      for (const token of [undefined, 'gofers_not-a-real-key', 'not-a-jwt']) {
        const res = await get(one.url, '/events/cursor', token);
        expect(res.status).toBe(401);
        for (const h of RATE_HEADERS) expect(res.headers.get(h), h).toBeNull();
      }
    }
    const res = await get(one.url, '/events/cursor', a.key);
    expect(res.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('answers /limits without a credential with the 401 the services give', async () => {
    const res = await get(one.url, '/limits');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
