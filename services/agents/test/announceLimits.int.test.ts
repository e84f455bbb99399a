import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, sql, type MikroORM } from '@oan/db';
import { agentStreamId } from '@oan/domain';
import { createLogger } from '@oan/http';
import { ANNOUNCE_STYLE, canonicalJson } from '@oan/protocol';
import { waitFor } from '@oan/testing';
import { buildApp } from '../src/app.ts';
import { loadAgentsConfig } from '../src/config.ts';
import { createAgentStore } from '../src/infra/events.ts';

/**
 * What anyone may write into the relay's log: every recorded announcement is kept for good, and an
 * agent address is a free key, so the limits are per client address (the hop the edge wrote; here
 * the test's loopback peer is trusted and writes it) and on the profile's size.
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
    TRUST_PROXY: 'loopback',
    AGENTS_ANNOUNCES_PER_MINUTE: '3',
    AGENTS_SOCKETS_PER_MINUTE: '6',
  });
  orm = await openDatabase({
    url: config.DATABASE_URL,
    schema: 'agents',
    migrations: [createAgentStore().migration()],
  });
  redis = new Redis(config.REDIS_URL);
  app = await buildApp({ config, orm, redis, logger: createLogger('agents', 'silent') });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await redis?.quit();
  await orm?.close(true);
});

class Agent {
  readonly key: KeyObject;
  readonly address: string;
  private ts = Math.floor(Date.now() / 1000);
  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.key = privateKey;
    this.address = `0x${Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex')}`;
  }
  announce(extra: Record<string, unknown> = {}): string {
    const msg = {
      type: 'ANNOUNCE',
      address: this.address,
      timestamp: ++this.ts,
      summary: 'x',
      endpoints: [],
      ...extra,
    };
    const signature = sign(null, Buffer.from(canonicalJson(msg, ANNOUNCE_STYLE)), this.key).toString('hex');
    return JSON.stringify({ ...msg, signature });
  }
}

/** An announce socket as the edge forwards it for `client` (null: straight from a fleet process). */
async function open(client: string | null) {
  const ws = new WebSocket(`${url}/ws/announce`, client ? { headers: { 'x-forwarded-for': client } } : {});
  const frames: Record<string, unknown>[] = [];
  ws.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString()) as Record<string, unknown>));
  await new Promise((r, j) => ws.on('open', r).on('error', j));
  const answer = async (frame: string) => {
    const n = frames.length;
    ws.send(frame);
    await waitFor(() => frames.length > n, { what: 'an answer to the ANNOUNCE' });
    return frames[n]!;
  };
  return { ws, answer };
}

const events = (address: string) =>
  sql<{ type: string; data: { connectionId: string } }>(
    orm.em.fork(),
    'select type, data from agents.events where stream_id = ? order by stream_version',
    [agentStreamId(address)],
  );

describe('when an ANNOUNCE carries a profile', () => {
  it('refuses one over 4 KiB as JSON with a clear ERROR and records nothing; takes one under it', async () => {
    const agent = new Agent();
    const s = await open('198.51.100.1');
    expect(await s.answer(agent.announce({ profile: { bio: 'b'.repeat(4100) } }))).toMatchObject({
      type: 'ERROR',
      error: 'Profile too large (max 4096 bytes as JSON)',
    });
    expect(await events(agent.address)).toEqual([]);
    expect(await s.answer(agent.announce({ profile: { bio: 'b'.repeat(3000) } }))).toEqual({
      type: 'ANNOUNCE_OK',
    });
    expect((await events(agent.address)).map((e) => e.type)).toEqual(['AgentAnnounced']);
    s.ws.close();
  });
});

describe('when one client announces fresh agent keys in a loop', () => {
  it('records its first three per minute, refuses the rest with ERROR and appends nothing for them', async () => {
    const answers = [];
    const agents = Array.from({ length: 5 }, () => new Agent());
    for (const agent of agents) {
      const s = await open('198.51.100.2');
      answers.push(await s.answer(agent.announce()));
      s.ws.close();
    }
    expect(answers.slice(0, 3)).toEqual([
      { type: 'ANNOUNCE_OK' },
      { type: 'ANNOUNCE_OK' },
      { type: 'ANNOUNCE_OK' },
    ]);
    expect(answers[3]).toMatchObject({
      type: 'ERROR',
      error: /^Rate limited: at most 3 new or changed ANNOUNCE/,
    });
    for (const agent of agents.slice(3)) expect(await events(agent.address)).toEqual([]);
    // Another client behind the edge is not held back by it.
    const other = await open('198.51.100.3');
    expect(await other.answer(new Agent().announce())).toEqual({ type: 'ANNOUNCE_OK' });
    other.ws.close();
  });

  it('refuses its sockets past the limit at the upgrade (429), and not a fleet process’s', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const ws = new WebSocket(`${url}/ws/input`, { headers: { 'x-forwarded-for': '198.51.100.4' } });
      statuses.push(
        await new Promise<number>((r) => {
          ws.on('open', () => {
            r(101);
            ws.close();
          });
          ws.on('unexpected-response', (_req, res) => r(res.statusCode ?? 0));
          ws.on('error', () => undefined);
        }),
      );
    }
    expect(statuses).toEqual([101, 101, 101, 101, 101, 101, 429]);
    // Straight from a trusted peer without a forwarded hop: a process of the fleet, not counted.
    for (let i = 0; i < 7; i++) {
      const s = await open(null);
      s.ws.close();
    }
  });
});

describe('when an online agent announces the same on a new socket', () => {
  it('records nothing new, and its later departure names the recorded socket', async () => {
    const agent = new Agent();
    const first = await open('198.51.100.5');
    expect(await first.answer(agent.announce())).toEqual({ type: 'ANNOUNCE_OK' });
    const second = await open('198.51.100.5');
    expect(await second.answer(agent.announce())).toEqual({ type: 'ANNOUNCE_OK' });
    expect((await events(agent.address)).map((e) => e.type)).toEqual(['AgentAnnounced']);
    second.ws.close();
    await waitFor(async () => (await events(agent.address)).at(-1)?.type === 'AgentDeparted', {
      what: 'the departure',
    });
    const [announced, departed] = await events(agent.address);
    // The read model's row names the first socket: the departure must name it too, or it stays online.
    expect(departed!.data.connectionId).toBe(announced!.data.connectionId);
    first.ws.close();
  });
});

describe('when a client writes its own relay_connection into a frame', () => {
  it('reaches the agent with the relay’s id of that client socket instead, one per socket', async () => {
    const agent = new Agent();
    const announce = await open('198.51.100.6');
    const toAgent: Record<string, unknown>[] = [];
    announce.ws.on('message', (d) => toAgent.push(JSON.parse((d as Buffer).toString()) as never));
    expect(await announce.answer(agent.announce())).toEqual({ type: 'ANNOUNCE_OK' });
    const client = async (sid: string) => {
      const ws = new WebSocket(`${url}/ws/input`, { headers: { 'x-forwarded-for': '198.51.100.7' } });
      await new Promise((r, j) => ws.on('open', r).on('error', j));
      ws.send(
        JSON.stringify({ type: 'INPUT', to: agent.address, session_id: sid, relay_connection: 'forged' }),
      );
      return ws;
    };
    const [a, b] = [await client('sess-a'), await client('sess-b')];
    const inputs = () => toAgent.filter((f) => f.type === 'INPUT');
    await waitFor(() => inputs().length === 2, { what: 'both frames at the agent' });
    const ids = inputs().map((f) => f.relay_connection);
    expect(ids.every((id) => typeof id === 'string' && id !== 'forged')).toBe(true);
    expect(new Set(ids).size).toBe(2);
    // Both leaves and the agent's departure are handled before the relay is stopped.
    a.close();
    b.close();
    await waitFor(() => toAgent.filter((f) => f.type === 'close').length === 2, { what: 'two closes' });
    announce.ws.close();
    await waitFor(async () => (await events(agent.address)).at(-1)?.type === 'AgentDeparted', {
      what: 'the departure',
    });
  });
});
