import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, waitFor } from '@oan/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

const WRITE = '/api/v1/auth/oan/email/request-code';

/** A replica of a service: answers /health and the write, naming itself, and keeps every body it read. */
interface Replica {
  name: string;
  url: string;
  bodies: string[];
  app: FastifyInstance;
}

const closing: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close().catch(() => undefined);
});

async function replica(name: string, opts: { port?: number; dieOnWrite?: boolean } = {}): Promise<Replica> {
  const bodies: string[] = [];
  const app = Fastify();
  app.get('/health', async () => ({ status: 'ok' }));
  app.post(WRITE, async (req, reply) => {
    bodies.push(JSON.stringify(req.body));
    // As a kill -9 mid-request looks from the edge: the body was read, no answer comes.
    if (opts.dieOnWrite) return reply.raw.socket?.destroy();
    return { replica: name };
  });
  await app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
  closing.push(app);
  return { name, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, bodies, app };
}

async function edge(authUrls: string[]): Promise<string> {
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      ENABLE_OPEN_API: 'true',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      AUTH_URL: authUrls.join(','),
      GATEWAY_URLS: 'http://127.0.0.1:9',
    }),
    metrics: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  closing.push(app);
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

const write = async (edgeUrl: string, n: number) => {
  const res = await fetch(`${edgeUrl}${WRITE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `u${n}@example.com` }),
  });
  return { status: res.status, body: (await res.json()) as { replica?: string; code?: string } };
};
const writes = (edgeUrl: string, from: number, count: number) =>
  Promise.all(Array.from({ length: count }, (_, i) => write(edgeUrl, from + i)));

describe('a service of several replicas behind the edge', () => {
  it('spreads the requests over every replica', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const url = await edge([a.url, b.url]);
    const answers = await writes(url, 0, 20);
    expect(new Set(answers.map((r) => r.body.replica))).toEqual(new Set(['a', 'b']));
    expect(a.bodies.length + b.bodies.length).toBe(20);
  });

  it('when one is gone, sends every write to the others before a probe notices, each once', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    const url = await edge([a.url, b.url]);
    await writes(url, 0, 4);
    await b.app.close();
    const before = a.bodies.length;
    const answers = await writes(url, 100, 20);
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answers.every((r) => r.body.replica === 'a')).toBe(true);
    const fresh = a.bodies.slice(before);
    expect(fresh).toHaveLength(20);
    expect(new Set(fresh).size).toBe(20);
  });

  it('answers 503 for a write a replica read and died on, and never sends it to another', async () => {
    const dying = await replica('dying', { dieOnWrite: true });
    const live = await replica('live');
    const url = await edge([dying.url, live.url]);
    const answers: Awaited<ReturnType<typeof write>>[] = [];
    for (let i = 0; i < 6; i++) answers.push(await write(url, i));
    const failed = answers.filter((r) => r.status === 503);
    expect(failed.length).toBe(dying.bodies.length);
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(r.body.code).toBe('SERVICE_UNAVAILABLE');
    for (const body of dying.bodies) expect(live.bodies).not.toContain(body);
    expect(answers.filter((r) => r.status === 200).length).toBe(live.bodies.length);
  });

  it('takes a new replica in once its /health answers', async () => {
    const a = await replica('a');
    // The replica that starts later: nothing listens on its port yet.
    const port = await freePort();
    const url = await edge([a.url, `http://127.0.0.1:${port}`]);
    expect((await writes(url, 0, 6)).every((r) => r.body.replica === 'a')).toBe(true);
    const c = await replica('c', { port });
    await waitFor(async () => (await writes(url, 50, 4)).some((r) => r.body.replica === 'c'), {
      timeoutMs: 10_000,
      what: 'the new replica to get requests',
    });
    expect(c.bodies.length).toBeGreaterThan(0);
  });
});
