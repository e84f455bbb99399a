import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';

/**
 * The edge's Prometheus metrics on a listener of their own (EDGE_METRICS_PORT): the edge's port is
 * the public origin, where `/metrics` would show anyone the fleet's traffic and routes.
 */
export async function serveMetrics(
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":"Not Found","code":"NOT_FOUND"}');
      return;
    }
    client.register.metrics().then(
      (text) => res.writeHead(200, { 'content-type': client.register.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
