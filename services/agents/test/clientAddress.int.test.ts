import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type MikroORM } from '@oan/db';
import { createLogger } from '@oan/http';
import { buildApp } from '../src/app.ts';
import { loadAgentsConfig } from '../src/config.ts';
import { createAgentStore } from '../src/infra/events.ts';

/**
 * Which client a lookup is counted against. The edge writes the address it saw as the last
 * X-Forwarded-For hop; a client may write any hops before it. Here the replica trusts 10.0.0.0/8
 * (the edge's network under compose) and loopback, where the test's WebSocket comes from.
 */
let app: Awaited<ReturnType<typeof buildApp>>;
let orm: MikroORM;
let redis: Redis;
let url: string;
beforeAll(async () => {
  const config = loadAgentsConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    REDIS_PREFIX: `test-agents-${randomUUID()}:`,
    TRUST_PROXY: 'loopback,10.0.0.0/8',
  });
  orm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'agents',
    migrations: [createAgentStore().migration()],
  });
  redis = new Redis(config.REDIS_URL);
  app = await buildApp({ config, orm, redis, logger: createLogger('agents', 'silent') });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await redis?.quit();
  await orm?.close(true);
});

/** An unknown address: answered without the directory, but counted against GET_AGENT's limit. */
const unknown = '/api/agents/not-an-address';
const get = (remoteAddress: string, xff: string) =>
  app.inject({ method: 'GET', url: unknown, remoteAddress, headers: { 'x-forwarded-for': xff } });

describe('the relay keys its limits by the hop the edge wrote', () => {
  it('HTTP lookups from the edge’s network count each client apart, not all in the edge’s bucket', async () => {
    for (let i = 0; i < 100; i++) expect((await get('10.9.0.2', '203.0.113.1')).statusCode).toBe(404);
    expect((await get('10.9.0.2', '203.0.113.1')).statusCode).toBe(429);
    // Another client behind the same edge still has its own budget.
    expect((await get('10.9.0.2', '203.0.113.2')).statusCode).toBe(404);
  });

  it('a hop the client wrote before the edge’s does not give /ws/lookup a fresh budget', async () => {
    const answers: Record<string, unknown>[] = [];
    for (let i = 0; i < 101; i++) {
      const sock = new WebSocket(`ws://${url}/ws/lookup`, {
        headers: { 'x-forwarded-for': `192.0.2.${i}, 198.51.100.50` },
      });
      await new Promise((r, j) => sock.on('open', r).on('error', j));
      const answer = new Promise<Record<string, unknown>>((r) =>
        sock.once('message', (d) => r(JSON.parse((d as Buffer).toString()) as Record<string, unknown>)),
      );
      sock.send(JSON.stringify({ type: 'GET_AGENT', address: 'not-an-address' }));
      answers.push(await answer);
      sock.close();
    }
    expect(answers.slice(0, 100).every((a) => a.type === 'AGENT_INFO')).toBe(true);
    expect(answers[100]).toMatchObject({ type: 'ERROR', error: /^Rate limited/ });
  });
});
