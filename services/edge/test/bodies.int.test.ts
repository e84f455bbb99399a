import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, readFilePart, registerUploadScope } from '@oan/http';
import { freePort } from '@oan/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { UPLOAD_BODY_LIMIT } from '@oan/http';

const KiB = 1024;
const MiB = 1024 * KiB;

interface Upstream {
  app: FastifyInstance;
  url: string;
  /** Requests that reached this upstream, by path. */
  hits: string[];
}

/**
 * Stand-ins built with the services' own factory and body limits, so an oversized body meets the
 * real refusal: a 413 sent before the body is read, then the connection closed (Fastify's parser).
 */
async function upstream(name: string, bodyLimit: number, routes: (app: FastifyInstance) => Promise<void>) {
  const app = await createHttpApp({ name, logLevel: 'silent', bodyLimit, metrics: false });
  const hits: string[] = [];
  // The edge's own health probes are not requests it passed on.
  app.addHook('onRequest', async (req) => void (req.url === '/health' || hits.push(req.url)));
  await routes(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, hits };
}

const echo = async (req: { headers: Record<string, unknown>; body?: unknown }) => ({
  expect: req.headers.expect ?? null,
  keepAlive: req.headers['keep-alive'] ?? null,
  upgrade: req.headers.upgrade ?? null,
  body: req.body ?? null,
});

interface RawAnswer {
  status: number;
  body: unknown;
}

/**
 * A request through node:http, which sends what fetch refuses to (`Expect`, hop-by-hop headers, a
 * declared length with no body). With `expect: 100-continue` the body waits for the interim 100.
 * With `body: 'none'` only the head is sent; the answer must come without the body.
 */
function raw(
  url: string,
  {
    method = 'POST',
    headers = {},
    body,
  }: { method?: string; headers?: OutgoingHttpHeaders; body?: Buffer | 'none' },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : null });
        if (body === 'none') req.destroy();
      });
    });
    if (body === 'none') req.flushHeaders();
    else if (String(headers.expect ?? '').toLowerCase() === '100-continue') {
      req.flushHeaders();
      req.once('continue', () => req.end(body));
    } else req.end(body);
  });
}

/** A multipart body with one `file` part of `size` bytes. */
function upload(size: number): FormData {
  const form = new FormData();
  form.append('file', new Blob([Buffer.alloc(size, 0x61)], { type: 'text/plain' }), 'a.txt');
  return form;
}

let auth: Upstream;
let conversations: Upstream;
let edge: { app: FastifyInstance; url: string };

beforeAll(async () => {
  auth = await upstream('auth', 16 * KiB, async (app) => {
    app.post('/api/v1/auth/oan/email/request-code', echo);
  });
  conversations = await upstream('conversations', 256 * KiB, async (app) => {
    app.post('/api/v1/conversations/:id', echo);
    await app.register(async (scope) => {
      await registerUploadScope(scope);
      scope.post('/api/v1/conversations/:id/attachments', async (req, reply) => {
        const part = await readFilePart(req);
        return reply.status(201).send({ size: part.bytes.length });
      });
    });
  });
  const nowhere = `http://127.0.0.1:${await freePort()}`;
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      ENABLE_OPEN_API: 'true',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      AUTH_URL: auth.url,
      CONVERSATIONS_URL: conversations.url,
      GATEWAY_URLS: nowhere,
    }),
    metrics: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  edge = { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
});

afterAll(async () => {
  await edge?.app.close();
  await auth?.app.close();
  await conversations?.app.close();
});

const requestCode = () => `${edge.url}/api/v1/auth/oan/email/request-code`;
const tooLarge = { error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' };

describe('hop-by-hop request headers', () => {
  it('an Expect: 100-continue request gets its 100, then the upstream answer, without the header upstream', async () => {
    const res = await raw(requestCode(), {
      headers: { 'content-type': 'application/json', expect: '100-continue' },
      body: Buffer.from(JSON.stringify({ email: 'a@example.test' })),
    });
    expect(res).toEqual({
      status: 200,
      body: { expect: null, keepAlive: null, upgrade: null, body: { email: 'a@example.test' } },
    });
  });

  it.each([
    ['keep-alive', 'timeout=5'],
    ['upgrade', 'h2c'],
  ])('a stray %s header is not forwarded (the upstream client refuses it)', async (name, value) => {
    const res = await raw(requestCode(), {
      headers: { 'content-type': 'application/json', [name]: value },
      body: Buffer.from('{"email":"b@example.test"}'),
    });
    expect(res).toEqual({
      status: 200,
      body: { expect: null, keepAlive: null, upgrade: null, body: { email: 'b@example.test' } },
    });
  });
});

describe('when a body is larger than the owning service accepts', () => {
  const oneMiB = Buffer.from(JSON.stringify({ email: 'x'.repeat(MiB) }));

  it('a declared 1 MiB JSON body to auth is a 413 with the error body, every time, never a 503', async () => {
    const before = auth.hits.length;
    for (let i = 0; i < 20; i++) {
      const res = await fetch(requestCode(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: oneMiB,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(tooLarge);
    }
    expect(auth.hits.length).toBe(before); // refused at the edge
  });

  it('a chunked 1 MiB body (no Content-Length) is cut at the limit and answered 413, never 503', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await raw(requestCode(), {
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        body: oneMiB,
      });
      expect(res).toEqual({ status: 413, body: tooLarge });
    }
  });

  it('with Expect: 100-continue an oversized declared body is refused without waiting for it', async () => {
    const res = await raw(requestCode(), {
      headers: {
        'content-type': 'application/json',
        'content-length': oneMiB.length,
        expect: '100-continue',
      },
      body: 'none',
    });
    expect(res).toEqual({ status: 413, body: tooLarge });
  });

  it('an upload declaring more than 10 MiB plus multipart overhead is a 413 before a byte is read', async () => {
    const before = conversations.hits.length;
    const res = await raw(`${edge.url}/api/v1/conversations/c1/attachments`, {
      headers: {
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': UPLOAD_BODY_LIMIT + 1,
      },
      body: 'none',
    });
    expect(res).toEqual({ status: 413, body: tooLarge });
    expect(conversations.hits.length).toBe(before);
  });

  it("a file of 10 MiB + 1 byte is the owner's 413, relayed, not a 503", async () => {
    const before = conversations.hits.length;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${edge.url}/api/v1/conversations/c1/attachments`, {
        method: 'POST',
        body: upload(10 * MiB + 1),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({
        error: expect.stringMatching(/^File larger/),
        code: 'PAYLOAD_TOO_LARGE',
      });
    }
    expect(conversations.hits.length).toBe(before + 3); // the owner measured the file itself
  });

  it('the JSON limit of a route group does not apply to its upload paths', async () => {
    const json = await fetch(`${edge.url}/api/v1/conversations/c1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x'.repeat(300 * KiB) }),
    });
    expect(json.status).toBe(413);
    expect(await json.json()).toEqual(tooLarge);
  });
});

describe('when a body is within the limit', () => {
  it('a 5 MiB upload passes through to the owner', async () => {
    const res = await fetch(`${edge.url}/api/v1/conversations/c1/attachments`, {
      method: 'POST',
      body: upload(5 * MiB),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ size: 5 * MiB });
  });

  it('a JSON body just under the limit reaches the owner', async () => {
    const body = { email: 'y'.repeat(16 * KiB - 100) };
    const res = await fetch(requestCode(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ body });
  });
});
