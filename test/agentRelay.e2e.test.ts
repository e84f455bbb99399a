import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFleet, waitFor } from '@oan/testing';
import { RelayAgent } from './relayAgent.ts';
import { relayClient } from './relayClient.ts';

/**
 * The ConnectOnion agent relay. The caller is the unmodified npm `connectonion` client
 * (0.1.4); the agents are the tests' own (RelayAgent, speaking the Python host's side of the protocol).
 */
let fleet: TestFleet;
const agents: RelayAgent[] = [];
const ws = (port: number | string) => `ws://127.0.0.1:${port}`;
let edge: string;
let replica1: string;
let replica2: string;

beforeAll(async () => {
  fleet = await TestFleet.start({ only: ['outbox', 'projector', 'agents1', 'agents2', 'edge'] });
  const port = (name: string) => fleet.plan.processes.find((p) => p.name === name)!.port;
  edge = fleet.url.replace('http://', 'ws://');
  replica1 = ws(port('agents1'));
  replica2 = ws(port('agents2'));
});
afterAll(async () => {
  for (const a of agents) a.stop();
  await fleet?.stop();
});

const hosted = async (relayUrl: string, summary?: string) => {
  const a = new RelayAgent(relayUrl, summary);
  agents.push(a);
  await a.start();
  return a;
};
/**
 * What a failed turn adds to what its client received: who listens on each replica's bus channel,
 * the routing table, which replicas are alive, and what the relay warned about.
 */
const relayState = async () => {
  const redis = new Redis(fleet.env.REDIS_URL!);
  const key = (k: string) => `${fleet.env.REDIS_PREFIX}agents:${k}`;
  try {
    const listeners = await redis.call('PUBSUB', 'NUMSUB', key('bus:a1'), key('bus:a2'));
    const owners = await redis.hgetall(key('owners'));
    const alive = [await redis.exists(key('replica:a1')), await redis.exists(key('replica:a2'))];
    const warned = fleet.lines.filter((l) => /"level":(40|50)/.test(l) && l.includes('relay')).slice(-10);
    return `bus listeners ${JSON.stringify(listeners)}, owners ${JSON.stringify(owners)}, alive a1/a2 ${alive.join('/')}, warnings ${JSON.stringify(warned)}`;
  } finally {
    redis.disconnect();
  }
};
const client = (agent: string, relayUrl: string) => relayClient(agent, relayUrl, relayState);
const lookup = (agent: string, path = 'api/agents') => fetch(`${fleet.url}/${path}/${agent}`);
/**
 * How often a test polls a lookup: GET_AGENT is limited to 100 a minute per client address (seed 001),
 * and every lookup here comes from 127.0.0.1, so a 50 ms poll would spend the minute's budget in five
 * seconds and then see only 429s (CI did).
 */
const LOOKUP_POLL_MS = 1500;

/** A raw socket to a relay path, its frames collected. */
async function rawSocket(url: string, headers: Record<string, string> = {}) {
  const sock = new WebSocket(url, { headers });
  const frames: Record<string, unknown>[] = [];
  const closed = new Promise<number>((r) => sock.on('close', (code) => r(code)));
  sock.on('message', (d) => frames.push(JSON.parse((d as Buffer).toString()) as Record<string, unknown>));
  await new Promise((r, j) => sock.on('open', r).on('error', j));
  return { sock, frames, closed };
}

describe('when an agent announces on one replica and the public client calls it through another', () => {
  it('answers several turns of one session through the edge, and the directory lists the agent', async () => {
    const agent = await hosted(replica2);
    const remote = client(agent.address, edge);
    for (const n of [1, 2, 3]) {
      const r = await remote.input(`hello ${n}`, { timeoutMs: 20_000 });
      expect(r.text).toBe(`echo: hello ${n} (turn ${n})`);
    }
    expect([...agent.turns.values()]).toEqual([3]);
    for (const path of ['api/agents', 'api/relay/agents']) {
      const body = await waitFor(
        async () => {
          const res = await lookup(agent.address, path);
          return res.status === 200 && ((await res.json()) as Record<string, unknown>);
        },
        { what: 'the directory to list the agent', timeoutMs: 20_000, intervalMs: LOOKUP_POLL_MS },
      );
      expect(body).toMatchObject({
        address: agent.address,
        summary: 'echo agent',
        endpoints: [],
        online: true,
      });
    }
  });

  it('routes a client on replica 1 to an agent on replica 2 and tells the agent when the client leaves', async () => {
    const agent = await hosted(replica2, 'translates text to spanish');
    const remote = client(agent.address, replica1);
    for (const n of [1, 2, 3]) {
      expect((await remote.input(`hola ${n}`, { timeoutMs: 20_000 })).text).toBe(
        `echo: hola ${n} (turn ${n})`,
      );
    }
    const [sid] = [...agent.turns.keys()];
    (remote.remote as unknown as { _closeWs(): void })._closeWs();
    await waitFor(() => agent.closed.includes(sid!), { what: 'the close frame at the agent' });
  });

  it('fails a turn the agent left unanswered with the reference error, the client on another replica', async () => {
    const agent = await hosted(replica2);
    const remote = client(agent.address, replica1);
    expect((await remote.input('one', { timeoutMs: 20_000 })).text).toBe('echo: one (turn 1)');
    agent.leaveOnInput = true;
    const started = Date.now();
    await expect(remote.input('two', { timeoutMs: 20_000 })).rejects.toThrow(/Agent not found or offline/);
    // told when the agent's socket closed, not after the client's own 20 s timeout
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a client whose agent is unknown with the reference error, and closes its socket', async () => {
    const unknown = `0x${'ab'.repeat(32)}`;
    const { sock, frames, closed } = await rawSocket(`${edge}/ws/input`);
    sock.send(JSON.stringify({ type: 'CONNECT', to: unknown, timestamp: 1, payload: {} }));
    await closed;
    expect(frames).toMatchObject([
      { type: 'ERROR', message: 'Agent not found or offline', error: 'Agent not found or offline' },
    ]);
    expect((await lookup(unknown)).status).toBe(404);
  });
});

describe('when the input is hostile', () => {
  it('answers bad JSON, bad or replayed signatures and spoofed addresses with ERROR, and keeps serving', async () => {
    const honest = await hosted(replica1);
    const { sock, frames } = await rawSocket(`${replica2}/ws/announce`);
    const other = new RelayAgent(replica2);
    sock.send('{not json');
    sock.send(JSON.stringify({ ...other.announceFrame(), summary: 'tampered' }));
    // Replay: the honest agent's own signed frame, accepted once already, sent again on another socket.
    const replayed = honest.lastAnnounce!;
    sock.send(JSON.stringify(replayed));
    // Spoof: a valid frame of one agent, with another's address put in.
    sock.send(JSON.stringify({ ...other.announceFrame(), address: honest.address }));
    sock.send(JSON.stringify({ type: 'OUTPUT', session_id: 'someone-elses', result: 'x' }));
    await waitFor(() => frames.length >= 5, { what: 'five ERROR frames' });
    expect(frames.map((f) => f.type)).toEqual(['ERROR', 'ERROR', 'ERROR', 'ERROR', 'ERROR']);
    expect(frames.map((f) => f.error)).toEqual([
      'Invalid JSON: expected an object',
      'Invalid signature',
      'Replayed ANNOUNCE: timestamp not newer than the last',
      'Invalid signature',
      'ANNOUNCE first',
    ]);
    sock.close();
    expect((await client(honest.address, edge).input('still there?', { timeoutMs: 20_000 })).text).toMatch(
      /^echo: still there\?/,
    );
  });

  it('closes a socket sending a frame over 1 MiB (1009) and accepts one of 1 MiB', async () => {
    const agent = await hosted(replica1);
    const { sock, closed } = await rawSocket(`${replica1}/ws/announce`);
    sock.send('x'.repeat(1024 * 1024 + 1));
    expect(await closed).toBe(1009);
    const big = 'y'.repeat(1024 * 1024 - 200);
    const r = await client(agent.address, replica2).input(big, { timeoutMs: 20_000 });
    expect(r.text.length).toBeGreaterThan(1024 * 1000);
  });

  it('closes a socket that never sends a frame within 10 s, and limits FIND on the lookup socket', async () => {
    const idle = await rawSocket(`${edge}/ws/input`);
    const { sock, frames } = await rawSocket(`${edge}/lookup`);
    for (let i = 0; i < 11; i++) sock.send(JSON.stringify({ type: 'FIND', query: 'spanish', timestamp: 1 }));
    await waitFor(() => frames.length === 11, { what: 'eleven answers' });
    expect(frames.slice(0, 10).every((f) => f.type === 'AGENTS')).toBe(true);
    expect(frames[10]).toMatchObject({ type: 'ERROR', error: 'Rate limited: at most 10 FIND per minute' });
    expect((frames[0]!.agents as { summary: string }[])[0]?.summary).toBe('translates text to spanish');
    sock.close();
    // The same client writing its own X-Forwarded-For is still the same client: the relay keys it
    // by the hop the edge wrote, not by the first one.
    const posing = await rawSocket(`${edge}/ws/lookup`, { 'x-forwarded-for': '203.0.113.5' });
    posing.sock.send(JSON.stringify({ type: 'FIND', query: 'spanish', timestamp: 1 }));
    await waitFor(() => posing.frames.length === 1, { what: 'an answer to the posing client' });
    expect(posing.frames[0]).toMatchObject({
      type: 'ERROR',
      error: 'Rate limited: at most 10 FIND per minute',
    });
    posing.sock.close();
    // GET_AGENT on the other path: AGENT_INFO for a listed agent, agent null for an unknown one.
    const listed = (frames[0]!.agents as { address: string }[])[0]!.address;
    const get = await rawSocket(`${edge}/ws/lookup`);
    get.sock.send(JSON.stringify({ type: 'GET_AGENT', address: listed }));
    get.sock.send(JSON.stringify({ type: 'GET_AGENT', address: `0x${'cd'.repeat(32)}` }));
    await waitFor(() => get.frames.length === 2, { what: 'two AGENT_INFO' });
    expect(get.frames[0]).toMatchObject({ type: 'AGENT_INFO', agent: { address: listed, online: true } });
    expect(get.frames[1]).toMatchObject({
      type: 'AGENT_INFO',
      agent: null,
      error: 'Agent not found or offline',
    });
    get.sock.close();
    await idle.closed;
  }, 30_000);
});

describe('when a relay replica is killed -9', () => {
  it('agents reconnect and re-announce, stale entries leave the directory, a session on the survivor goes on', async () => {
    const onSurvivor = await hosted(replica1);
    const survivorClient = client(onSurvivor.address, replica1);
    expect((await survivorClient.input('before', { timeoutMs: 20_000 })).text).toBe('echo: before (turn 1)');
    const mobile = await hosted(edge, 'reconnects through the edge');
    const stranded = await hosted(replica2, 'only knows replica 2');
    // The edge spreads sockets round robin: make sure `mobile` sits on replica 2 too.
    const redis = new Redis(fleet.env.REDIS_URL!);
    const replicaOf = async (a: RelayAgent) =>
      (await redis.hget(`${fleet.env.REDIS_PREFIX}agents:owners`, a.address))?.split('|')[0];
    try {
      while ((await replicaOf(mobile)) !== 'a2') {
        const n = mobile.announcedOk;
        mobile.ws?.close();
        await waitFor(() => mobile.announcedOk > n, { what: 'mobile to reconnect' });
      }
    } finally {
      redis.disconnect();
    }
    await waitFor(async () => (await lookup(stranded.address)).status === 200, {
      what: 'stranded listed',
      intervalMs: LOOKUP_POLL_MS,
    });
    const before = mobile.announcedOk;

    await fleet.kill('agents2');
    await waitFor(() => mobile.announcedOk > before, { what: 'mobile to re-announce', timeoutMs: 20_000 });
    expect((await client(mobile.address, edge).input('moved', { timeoutMs: 20_000 })).text).toMatch(
      /^echo: moved/,
    );
    await waitFor(async () => (await lookup(stranded.address)).status === 404, {
      what: 'the stranded agent to leave the directory',
      timeoutMs: 20_000,
      intervalMs: LOOKUP_POLL_MS,
    });
    expect((await survivorClient.input('after', { timeoutMs: 20_000 })).text).toBe('echo: after (turn 2)');

    await fleet.restart('agents2');
    // The replica's start-up (seconds on a busy machine), then the agent's reconnect backoff.
    await waitFor(async () => (await lookup(stranded.address)).status === 200, {
      what: 'the stranded agent back after the restart',
      timeoutMs: 60_000,
      intervalMs: LOOKUP_POLL_MS,
    });
  }, 150_000);
});
