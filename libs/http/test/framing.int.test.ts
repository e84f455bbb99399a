import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHttpApp } from '../src/index.ts';

/** Whatever a client sends, the answer is a 4xx with the `{error, code}` body. */
let app: Awaited<ReturnType<typeof createHttpApp>>;
let port: number;

beforeAll(async () => {
  app = await createHttpApp({ name: 't', logLevel: 'silent', metrics: false });
  app.post('/api/v1/things/:id', { schema: { body: z.object({ text: z.string() }) } }, async (req) => ({
    id: (req.params as { id: string }).id.length,
  }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
});

/** Sends raw bytes, returns status and the JSON body the server wrote. */
function raw(request: Buffer | string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      try {
        resolve({ status, body: JSON.parse(bodyText) as unknown });
      } catch {
        reject(new Error(`not a JSON body: ${JSON.stringify(text.slice(0, 300))}`));
      }
    });
    socket.end(request);
  });
}

const expectErrorBody = (body: unknown, code: string) => {
  expect(Object.keys(body as object).sort()).toEqual(['code', 'error']);
  expect((body as { code: string }).code).toBe(code);
};

const post = (path: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`;

describe('requests the HTTP parser or the router refuses', () => {
  it.each([
    [
      'a non-numeric Content-Length',
      'POST /api/v1/things/1 HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      400,
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /api/v1/things/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
    ],
    ['a control character in a header', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n', 400],
    [
      'headers over 16 KiB',
      `GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(17_000)}\r\n\r\n`,
      431,
    ],
  ])('answers %s with the error body', async (_label, request, status) => {
    const res = await raw(request);
    expect(res.status).toBe(status);
    expectErrorBody(res.body, 'REQUEST_ERROR');
  });

  it.each(['%', '%ED%A0%80', '%C0%AF', '%FF'])(
    'answers a bad percent-encoding (%s) with 400 and the error body',
    async (bad) => {
      const res = await raw(post(`/api/v1/things/${bad}`, '{"text":"x"}'));
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 'REQUEST_ERROR');
    },
  );

  it('lets a very long id reach its route (which answers it), never a 414', async () => {
    const res = await raw(post(`/api/v1/things/${'i'.repeat(5000)}`, '{"text":"x"}'));
    expect(res).toEqual({ status: 200, body: { id: 5000 } });
  });
});

describe('JSON bodies with text that cannot be stored', () => {
  it.each([
    ['a NUL character', '{"text":"a\\u0000b"}'],
    ['a lone high surrogate', '{"text":"\\ud800"}'],
    ['a lone low surrogate in a nested key', '{"text":"ok","deep":[{"\\udc00":1}]}'],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_label, body) => {
    const res = await raw(post('/api/v1/things/1', body));
    expect(res.status).toBe(400);
    expectErrorBody(res.body, 'VALIDATION_ERROR');
  });

  it('accepts a proper surrogate pair and survives deep nesting', async () => {
    expect(await raw(post('/api/v1/things/1', '{"text":"\\ud83d\\ude00"}'))).toEqual({
      status: 200,
      body: { id: 1 },
    });
    const deep = `{"text":"x","n":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await raw(post('/api/v1/things/1', deep));
    expect(res.status).toBeLessThan(500);
  });
});
