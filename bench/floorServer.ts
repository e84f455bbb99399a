/**
 * A child of bench/floor.ts, so that its CPU is counted apart: `echo` answers `POST /x` with 201 and
 * a JSON body (a service's HTTP handling with nothing behind it); `proxy <port>` forwards every
 * request to that port with @fastify/http-proxy, the edge's proxy. Sends `{ port }` to its parent.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';

const [mode, upstreamPort] = process.argv.slice(2);
const app = Fastify({ logger: false });
if (mode === 'echo') {
  app.post('/x', async (req, reply) => reply.code(201).send({ id: 'floor', received: req.body }));
} else if (mode === 'proxy') {
  await app.register(httpProxy, { upstream: `http://127.0.0.1:${upstreamPort}`, prefix: '/' });
} else {
  throw new Error(`floorServer: unknown mode ${mode}`);
}
await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ port: (app.server.address() as AddressInfo).port });
