import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The gateway's own test fixtures: the edge is tested against a real gateway, not a stub.
import {
  insertAccount,
  insertApiKey,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
} from '@oan/gateway/testing';
import { buildApp } from '../src/app.ts';
import { loadEdgeConfig } from '../src/config.ts';

let fleet: Fleet;
let gw: RunningGateway;
let edge: { app: Awaited<ReturnType<typeof buildApp>>; url: string };

beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet);
  const app = await buildApp({
    config: loadEdgeConfig({
      LOG_LEVEL: 'silent',
      ENABLE_OPEN_API: 'true',
      JWT_SECRET: 'edge-test-secret-edge-test-secret-0123',
      GATEWAY_URLS: gw.url,
    }),
    metrics: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  edge = { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
});

afterAll(async () => {
  await edge?.app.close();
  await gw?.close();
  await fleet?.close();
});

const held = async () =>
  (await client.register.getSingleMetric('oan_gateway_long_polls_held')!.get()).values[0]?.value ?? 0;

describe('a long-poll through the edge', () => {
  it('is released at the gateway as soon as its client goes away', async () => {
    const account = await insertAccount(fleet.orm);
    const { key } = await insertApiKey(fleet.orm, account);
    const abort = new AbortController();
    const answer = fetch(`${edge.url}/api/v1/events?since=0&wait=30`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    }).catch((err: unknown) => err);
    await waitFor(async () => expect(await held()).toBe(1));
    abort.abort();
    await answer;
    await waitFor(async () => expect(await held()).toBe(0), 3000);
  });

  it('is held through the proxy for as long as asked, past 10 s', async () => {
    const account = await insertAccount(fleet.orm);
    const { key } = await insertApiKey(fleet.orm, account);
    const started = Date.now();
    const res = await fetch(`${edge.url}/api/v1/events?since=0&wait=12`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('[]');
    expect(Date.now() - started).toBeGreaterThanOrEqual(11_900);
  }, 20_000);
});
