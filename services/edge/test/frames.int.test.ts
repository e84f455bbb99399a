import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import WebSocket, { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

/**
 * The edge's WebSocket proxy bounds a client frame by the largest its upstream takes (the relay:
 * 1 MiB; a gateway's Socket.IO: 16 KiB), so a 100 MiB frame (the `ws` default) is never buffered at
 * the edge. The upstream here stands in for both, with no limit of its own, and records the sizes
 * that reached it by path.
 */
let relay: FastifyInstance;
let edge: Awaited<ReturnType<typeof buildApp>>;
let edgeUrl: string;
const received: Record<string, number[]> = { '/ws/input': [], '/socket.io/': [] };

beforeAll(async () => {
  relay = Fastify();
  relay.get('/health', async () => ({ status: 'ok' }));
  const wss = new WebSocketServer({ noServer: true, maxPayload: 512 * 1024 * 1024 });
  relay.server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      ws.on('message', (d) => (received[path] ??= []).push((d as Buffer).length));
    }),
  );
  await relay.listen({ port: 0, host: '127.0.0.1' });
  const upstream = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
  edge = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      AUTH_URL: 'http://127.0.0.1:9',
      GATEWAY_URLS: upstream,
      AGENTS_URLS: upstream,
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
    await expect.poll(() => received['/ws/input'], { timeout: 5000 }).toEqual([1024 * 1024]);
    sock.send(Buffer.alloc(2 * 1024 * 1024, 'b'));
    expect(await closed).toBe(1009);
    await new Promise((r) => setTimeout(r, 200));
    expect(received['/ws/input']).toEqual([1024 * 1024]);
  });

  it('passes a Socket.IO frame of 16 KiB and closes a larger one with 1009 before it reaches a gateway', async () => {
    const sock = new WebSocket(`${edgeUrl}/socket.io/?EIO=4&transport=websocket`);
    const closed = new Promise<number>((r) => sock.on('close', (code) => r(code)));
    await new Promise((r, j) => sock.on('open', r).on('error', j));
    sock.send(Buffer.alloc(16 * 1024, 'a'));
    await expect.poll(() => received['/socket.io/'], { timeout: 5000 }).toEqual([16 * 1024]);
    sock.send(Buffer.alloc(16 * 1024 + 1, 'b'));
    const open = new Promise((r) => setTimeout(() => r('still open'), 5000).unref());
    expect(await Promise.race([closed, open])).toBe(1009);
    await new Promise((r) => setTimeout(r, 200));
    expect(received['/socket.io/']).toEqual([16 * 1024]);
  });
});
