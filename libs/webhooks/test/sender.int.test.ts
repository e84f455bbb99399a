import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSender } from '../src/sender.ts';

/** The sender against a real server on loopback, in production mode (no QA switch). */
let server: Server;
let port: number;
const hits: { url: string; headers: Record<string, unknown>; body: string }[] = [];
const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.url === '/redirect') res.writeHead(302, { location: '/ok' }).end();
      else if (req.url === '/answer') res.writeHead(200).end('{"outcome":"handled"}');
      else if (req.url === '/long') res.writeHead(200).end('x'.repeat(5000));
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const body = '{"v":1,"seq":"1"}';
const now = new Date();

describe('a sender in production mode', () => {
  const sender = new WebhookSender({ policy: { allowLoopback: false }, timeoutMs: 2000 });
  afterAll(() => sender.close());

  it.each([
    ['a literal loopback address', () => `https://127.0.0.1:${port}/x`, 'loopback'],
    ['a literal IPv6 loopback address', () => `https://[::1]:${port}/x`, 'loopback'],
    ['a name that resolves to loopback', () => `https://localhost:${port}/x`, 'loopback'],
    ['a private address', () => 'https://10.255.255.1/x', 'private'],
    ['a link-local address', () => 'https://169.254.10.10/x', 'link-local'],
    ['the metadata address', () => 'https://169.254.169.254/latest/meta-data', 'metadata'],
    ['an IPv4-mapped private address', () => 'https://[::ffff:192.168.0.1]/x', 'private'],
    ['a unique-local IPv6 address', () => 'https://[fd00::1]/x', 'private'],
  ])('refuses %s at send time, without connecting', async (_name, url, cls) => {
    const before = hits.length;
    const attempt = await sender.send({ url: url(), secret }, 'msg_1', body, now);
    expect(attempt).toMatchObject({ delivered: false, statusCode: null });
    expect(attempt.error).toContain(`(${cls})`);
    expect(hits.length).toBe(before);
  });
});

describe('a sender with the QA switch', () => {
  const sender = new WebhookSender({ policy: { allowLoopback: true }, timeoutMs: 2000 });
  afterAll(() => sender.close());

  it('delivers to loopback, signed so the library verifies it', async () => {
    const attempt = await sender.send({ url: `http://localhost:${port}/ok`, secret }, 'msg_2', body, now);
    expect(attempt).toMatchObject({ delivered: true, statusCode: 204, error: null });
    const hit = hits.at(-1)!;
    expect(new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>)).toEqual(
      JSON.parse(body),
    );
    expect(hit.headers['webhook-id']).toBe('msg_2');
  });

  it('does not follow a redirect: a 3xx is a failure', async () => {
    const before = hits.length;
    const attempt = await sender.send(
      { url: `http://127.0.0.1:${port}/redirect`, secret },
      'msg_3',
      body,
      now,
    );
    expect(attempt).toMatchObject({ delivered: false, statusCode: 302 });
    expect(hits.length).toBe(before + 1);
  });

  it('reads the answer when asked, within its limit', async () => {
    const url = (path: string) => ({ url: `http://127.0.0.1:${port}${path}`, secret });
    const read = await sender.send(url('/answer'), 'msg_5', body, now, { answerLimitBytes: 1024 });
    expect(read).toMatchObject({ delivered: true, statusCode: 200, answer: '{"outcome":"handled"}' });
    const long = await sender.send(url('/long'), 'msg_6', body, now, { answerLimitBytes: 1024 });
    expect(long).toMatchObject({ delivered: false, statusCode: 200, error: 'answer longer than 1024 bytes' });
    expect(long.answer).toBeUndefined();
    const ignored = await sender.send(url('/answer'), 'msg_7', body, now);
    expect(ignored.answer).toBeUndefined();
  });

  it('sends the content type and headers it is given, and no signature without a key', async () => {
    const url = `http://127.0.0.1:${port}/ok`;
    const attempt = await sender.send({ url, secret: null }, 'msg_8', body, now, {
      contentType: 'application/a2a+json',
      headers: { 'x-a2a-notification-token': 'tok', 'webhook-id': 'forged' },
    });
    expect(attempt).toMatchObject({ delivered: true, statusCode: 204 });
    const hit = hits.at(-1)!;
    expect(hit.headers).toMatchObject({
      'content-type': 'application/a2a+json',
      'x-a2a-notification-token': 'tok',
      'webhook-id': 'msg_8',
    });
    expect(hit.headers['webhook-signature']).toBeUndefined();
    const raw = new TextEncoder().encode('a raw key');
    await sender.send({ url, secret: raw }, 'msg_9', body, now);
    const signed = hits.at(-1)!;
    expect(
      new Webhook(raw, { format: 'raw' }).verify(signed.body, signed.headers as Record<string, string>),
    ).toEqual(JSON.parse(body));
  });

  it('still refuses private addresses', async () => {
    const attempt = await sender.send({ url: 'http://10.0.0.1/x', secret }, 'msg_4', body, now);
    expect(attempt.error).toContain('(private)');
  });
});
