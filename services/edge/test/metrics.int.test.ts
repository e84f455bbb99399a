import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';
import { serveMetrics } from '../src/metrics.ts';

let edge: { app: Awaited<ReturnType<typeof buildApp>>; url: string };
let metrics: Awaited<ReturnType<typeof serveMetrics>>;

beforeAll(async () => {
  const app = await buildApp({
    config: loadEdgeConfig({ LOG_LEVEL: 'silent', JWT_SECRET: 'edge-test-secret-edge-test-secret-0123' }),
    metrics: true,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  edge = { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  metrics = await serveMetrics('127.0.0.1', 0);
});

afterAll(async () => {
  await edge?.app.close();
  await metrics?.close();
});

describe('the edge’s metrics', () => {
  it('are not served on the public origin: /metrics is the usual 404', async () => {
    for (const path of ['/metrics', '/metrics/', '//metrics']) {
      const res = await fetch(`${edge.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('are served on their own listener (EDGE_METRICS_PORT), counting the public requests', async () => {
    expect((await fetch(`${edge.url}/api/health`)).status).toBe(200);
    const res = await fetch(`${metrics.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/api\/health"/);
    expect((await fetch(`${metrics.url}/other`)).status).toBe(404);
  });
});
