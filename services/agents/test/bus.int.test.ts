import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type MikroORM } from '@oan/db';
import { createLogger, subscribeWhenReady } from '@oan/http';
import { buildApp } from '../src/app.ts';
import { loadAgentsConfig } from '../src/config.ts';
import { Bus, type BusMessage } from '../src/infra/bus.ts';
import { createAgentStore } from '../src/infra/events.ts';

/**
 * Two relay replicas sharing one Redis routing table, and what a client hears when the table names
 * a socket that no replica can reach: the routing state is written by the test.
 */
const prefix = `test-agents-${randomUUID()}:`;
const key = (k: string) => `${prefix}agents:${k}`;
let orm: MikroORM;
let redis: Redis;
const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
const urls: string[] = [];
beforeAll(async () => {
  redis = new Redis(loadAgentsConfig().REDIS_URL);
  for (const replica of ['r1', 'r2']) {
    const config = loadAgentsConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      REDIS_PREFIX: prefix,
      AGENTS_REPLICA_ID: replica,
    });
    orm ??= await openDatabase({
      url: config.DATABASE_URL,
      schema: 'agents',
      migrations: [createAgentStore().migration()],
    });
    const app = await buildApp({ config, orm, redis, logger: createLogger('agents', 'silent') });
    await app.listen({ host: '127.0.0.1', port: 0 });
    apps.push(app);
    urls.push(`ws://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
});
afterAll(async () => {
  for (const app of apps) await app.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis?.quit();
  await orm?.close(true);
});

/**
 * A client's CONNECT on replica r1: the frames it got and how its socket closed (code 0: still open
 * after 10 s, so a failure shows what it got). `meanwhile` runs once the CONNECT is sent.
 */
async function connectOnR1(to: string, meanwhile: () => Promise<void> = async () => undefined) {
  const ws = new WebSocket(`${urls[0]}/ws/input`);
  const frames: unknown[] = [];
  ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString())));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  await new Promise((r, j) => ws.on('open', r).on('error', j));
  const started = Date.now();
  ws.send(JSON.stringify({ type: 'CONNECT', to, timestamp: 1, payload: {} }));
  await meanwhile();
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    closed,
    new Promise<number>((r) => (timer = setTimeout(() => r(0), 10_000))),
  ]);
  clearTimeout(timer);
  ws.terminate();
  return { code, frames, ms: Date.now() - started };
}

const agentAddress = () => `0x${randomBytes(32).toString('hex')}`;
const notFound = { type: 'ERROR', error: 'Agent not found or offline' };

describe('a client whose agent the routing table names but no replica can reach', () => {
  it('gets the reference error and a closed socket at once when the named replica hears nothing', async () => {
    const to = agentAddress();
    // A replica that looks alive (its heartbeat key) but listens on no bus channel.
    await redis.set(key('replica:ghost'), '1', 'PX', 30_000);
    await redis.hset(key('owners'), to, 'ghost|ghost.1');
    const r = await connectOnR1(to);
    expect(r.frames).toMatchObject([notFound]);
    expect(r.code).toBe(1008);
    expect(r.ms).toBeLessThan(5_000);
  });

  it('gets them too when the named replica has no such socket', async () => {
    const to = agentAddress();
    await redis.hset(key('owners'), to, 'r2|r2.999');
    const r = await connectOnR1(to);
    expect(r.frames).toMatchObject([notFound]);
    expect(r.code).toBe(1008);
    expect(r.ms).toBeLessThan(5_000);
  });

  it("gets them when the answer may have been lost while its replica's bus connection was down", async () => {
    const to = agentAddress();
    // A replica that hears the CONNECT and never answers (an agent busy past the client's patience).
    const silent = redis.duplicate();
    const heard: string[] = [];
    silent.on('message', (_c: string, m: string) => heard.push(m));
    await subscribeWhenReady(silent, key('bus:silent'));
    await redis.set(key('replica:silent'), '1', 'PX', 30_000);
    await redis.hset(key('owners'), to, 'silent|silent.1');
    const r = await connectOnR1(to, async () => {
      await expect.poll(() => heard.length).toBe(1);
      // r1's bus connection drops (as a Redis restart or a cut link would do): frames for r1
      // published now reach no one, and ioredis reconnects and subscribes again.
      const clients = (await redis.client('LIST')) as string;
      const id = clients
        .split('\n')
        .find((l) => l.includes(` name=${key('bus:r1')} `))
        ?.match(/^id=(\d+)/)?.[1];
      expect(id).toBeDefined();
      await redis.client('KILL', 'ID', id!);
    });
    await silent.quit();
    expect(r.frames).toMatchObject([notFound]);
    expect(r.code).toBe(1008);
    expect(r.ms).toBeLessThan(5_000);
    // and r1 listens again
    await expect
      .poll(async () => ((await redis.call('PUBSUB', 'NUMSUB', key('bus:r1'))) as [string, number])[1])
      .toBe(1);
  });
});

describe('the bus', () => {
  it('subscribes again when Redis no longer counts its subscription', async () => {
    const channelOf = (r: string) => `${prefix}test-bus:${r}`;
    const bus = new Bus(redis, channelOf, createLogger('agents', 'silent'));
    const heard: BusMessage[] = [];
    let gaps = 0;
    await bus.start(
      'me',
      (m) => heard.push(m),
      () => gaps++,
    );
    const m: BusMessage = { kind: 'a', address: 'x', sid: 's', origin: 'o', frame: '{"type":"PING"}' };
    expect(await bus.send('me', m)).toBe(true);
    // The subscription gone while the connection stays up (what the relay must notice).
    await (bus as unknown as { sub: Redis }).sub.unsubscribe(channelOf('me'));
    expect(await bus.send('me', m)).toBe(false);
    await bus.ensureListening('me');
    expect(gaps).toBe(1);
    expect(await bus.send('me', m)).toBe(true);
    await expect.poll(() => heard.length).toBe(2);
    expect(heard[1]).toEqual(m);
    // Listening, it says nothing.
    await bus.ensureListening('me');
    expect(gaps).toBe(1);
    await bus.close();
  });
});
