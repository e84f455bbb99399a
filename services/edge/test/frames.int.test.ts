import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import WebSocket, { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

/**
 * The edge's WebSocket proxy bounds a client frame by the largest its upstream takes (the relay:
 * 1 MiB), so a 100 MiB frame (the `ws` default) is never buffered at the edge. The upstream here is a
 * stand-in with no limit of its own, which records the sizes that reached it.
 */
let relay: FastifyInstance;
let edge: Awaited<ReturnType<typeof buildApp>>;
let edgeUrl: string;
const received: number[] = [];

beforeAll(async () => {
  relay = Fastify();
  relay.get('/health', async () => ({ status: 'ok' }));
  const wss = new WebSocketServer({ noServer: true, maxPayload: 512 * 1024 * 1024 });
  relay.server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) =>
      ws.on('message', (d) => received.push((d as Buffer).length)),
    ),
  );
  await relay.listen({ port: 0, host: '127.0.0.1' });
  edge = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      AUTH_URL: 'http://127.0.0.1:9',
      GATEWAY_URLS: 'http://127.0.0.1:9',
      AGENTS_URLS: `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`,
    }),
    metrics: false,
  });
  await edge.listen({ port: 0, host: '127.0.0.1' });
  edgeUrl = `ws://127.0.0.1:${(edge.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await edge?.close();
  await relay?.close();
});

describe('frames through the edge', () => {
  it('passes a relay frame of 1 MiB and closes a larger one with 1009 before it reaches the relay', async () => {
    const sock = new WebSocket(`${edgeUrl}/ws/input`);
    const closed = new Promise<number>((r) => sock.on('close', (code) => r(code)));
    await new Promise((r, j) => sock.on('open', r).on('error', j));
    sock.send(Buffer.alloc(1024 * 1024, 'a'));
    await expect.poll(() => received, { timeout: 5000 }).toEqual([1024 * 1024]);
    sock.send(Buffer.alloc(2 * 1024 * 1024, 'b'));
    expect(await closed).toBe(1009);
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toEqual([1024 * 1024]);
  });
});
