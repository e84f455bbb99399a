import { randomBytes } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { postJson, TestConnector, waitFor } from '@oan/testing';
import { ComposeFleet, composeTestWanted } from './composeFleet.ts';
import { readTablesOf } from './faults/database.ts';
import { dumpEventTable, dumpTables } from './support.ts';

// The docker-compose fleet on local images, through the edge's published loopback port.
const wanted = composeTestWanted();
if (!wanted.run) console.warn(`compose e2e skipped: ${wanted.reason}`);

const email = `compose-${randomBytes(4).toString('hex')}@example.com`;
let fleet: ComposeFleet | undefined;
let apiKey = '';
let c: TestConnector;
let goferId = '';
const sockets: { gateway: string; socket: Socket; pushes: OanEventEnvelope[] }[] = [];

/** A raw socket on /oan (event oan:event) through the edge, and the gateway that holds it. */
async function openSocket(url: string, token: string, transport: 'websocket' | 'polling') {
  const socket = io(`${url}/oan`, {
    // Long-polling: every request must reach the replica that minted the sid (the edge's sticky routing).
    transports: [transport],
    auth: { token },
    forceNew: true,
    reconnection: false,
  });
  const pushes: OanEventEnvelope[] = [];
  socket.on('oan:event', (e: OanEventEnvelope) => pushes.push(e));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
  // Engine.IO session ids are `<GATEWAY_ID>.<random>` (services/edge/src/gateways.ts).
  const gateway = socket.io.engine.id.split('.')[0]!;
  return { gateway, socket, pushes };
}

const ofGofer = (events: OanEventEnvelope[]) => events.filter((e) => e.goferId === goferId);
const chatReplies = (events: OanEventEnvelope[]) =>
  events.filter((e) => e.type === 'gofer_message' && e.goferId === goferId);

describe.skipIf(!wanted.run)('the docker-compose fleet on local images', () => {
  beforeAll(async () => {
    fleet = await ComposeFleet.start(email);
    const req = await postJson(fleet.url, '/auth/oan/email/request-code', { email });
    expect(req.status).toBe(200);
    const verify = await postJson(fleet.url, '/auth/oan/email/verify', {
      email,
      code: fleet.loginCode,
      platform: 'other',
    });
    expect(verify.status).toBe(200);
    const pairing = await postJson(
      fleet.url,
      '/auth/oan/pairing-codes',
      undefined,
      verify.body.token as string,
    );
    const redeem = await postJson(fleet.url, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
    expect(redeem.status).toBe(200);
    apiKey = redeem.body.apiKey as string;
    c = new TestConnector({ baseUrl: fleet.url, token: apiKey });
    await c.connect();
  }, 1_800_000);
  afterAll(async () => {
    c?.close();
    for (const s of sockets) s.socket.close();
    await fleet?.down();
  }, 180_000);

  it('creates a Gofer whose reply arrives on the socket and in GET /events', async () => {
    const created = await c.rest<{ goferId: string; greeting: string; webUrl?: string }>('POST', '/gofers', {
      locale: 'en',
    });
    expect(created.status).toBe(201);
    goferId = created.body.goferId;
    // The webUrl opens the web frontend the app image built and the edge serves.
    expect(created.body.webUrl).toBe(`${fleet!.url}/gofers/${goferId}`);
    const page = await fetch(created.body.webUrl!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect((await fetch(new URL(script!, fleet!.url))).status).toBe(200);
    const posted = await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
      content: 'I want to hire a backend engineer.',
    });
    expect(posted.status).toBe(202);
    const reply = await waitFor(
      () => chatReplies(c.delivered).find((e) => e.payload.content !== created.body.greeting),
      { timeoutMs: 30_000, what: 'the reply on the socket' },
    );
    const events = await c.rest<OanEventEnvelope[]>('GET', '/events?since=0&limit=200');
    expect(events.body.map((e) => e.eventId)).toContain(reply.eventId);
  }, 300_000);

  it('scaled to three gateways (--scale), every socket on every replica gets every envelope once, in order', async () => {
    // The file's default is two replicas; the edge finds the third through the service's DNS name.
    const replicas = await fleet!.scaleGateways(3);
    // Each replica's GATEWAY_ID is `auto`: its hostname, which compose makes the container's short id.
    const ids = replicas.map((id) => id.slice(0, 12));
    expect(new Set(ids).size).toBe(3);
    const cursor = (await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq;
    // The edge spreads new sockets round robin over the replicas its probe finds up.
    await waitFor(
      async () => {
        sockets.push(await openSocket(fleet!.url, apiKey, sockets.length % 2 ? 'polling' : 'websocket'));
        return ids.every((g) => sockets.filter((s) => s.gateway === g).length >= 2);
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'two sockets on each of the three gateway replicas' },
    );
    // Every socket is on one of the replicas (the sid prefix names the container that minted it).
    expect(sockets.filter((s) => !ids.includes(s.gateway))).toEqual([]);
    // Each answer gets the brain's next turn: a message or a question, an envelope either way.
    for (const text of ['Remote, TypeScript and Postgres.', 'A small fintech team.', 'Call you Scout.']) {
      const before = ofGofer(c.delivered).length;
      expect((await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content: text })).status).toBe(202);
      await waitFor(() => ofGofer(c.delivered).length > before, { timeoutMs: 30_000, what: 'the next turn' });
    }
    const truth = await waitFor(
      async () => {
        const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${cursor}&limit=200`);
        const ids = page.body.map((e) => e.eventId).join();
        return sockets.every((s) => s.pushes.map((e) => e.eventId).join() === ids) ? page.body : undefined;
      },
      { timeoutMs: 30_000, what: 'every socket to hold exactly what GET /events holds' },
    );
    expect(ofGofer(truth).length).toBeGreaterThanOrEqual(3);
    for (const s of sockets) {
      const seqs = s.pushes.map((e) => BigInt(e.seq));
      expect(
        seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!),
        `socket on ${s.gateway}`,
      ).toBe(true);
    }
  }, 300_000);

  it('rebuilds identical read models with the replay run in the fleet while the projector is stopped', async () => {
    const url = fleet!.databaseUrl;
    const tables = await readTablesOf(url);
    const before = { models: await dumpTables(url, tables), events: await dumpEventTable(url) };
    fleet!.compose(['stop', 'projector']);
    const out = fleet!.compose([
      'run',
      '--rm',
      '--no-deps',
      '-T',
      'projector',
      'node',
      'services/projector/src/replay.ts',
    ]);
    expect(out).toMatch(/replayed \d+ records/);
    expect({ models: await dumpTables(url, tables), events: await dumpEventTable(url) }).toEqual(before);
  }, 300_000);

  it('ran every container as a non-root user, none restarted', () => {
    const containers = fleet!.containers();
    expect(containers.length).toBeGreaterThanOrEqual(14);
    for (const k of containers) {
      expect(k.restarts, `${k.service} restarts`).toBe(0);
      if (k.service === 'projector') expect(k.status).toBe('exited');
      else {
        expect(k.status, k.service).toBe('running');
        expect(fleet!.userOf(k.id), `${k.service} user`).not.toMatch(/^(|root|0)(:.*)?$/);
      }
    }
  }, 300_000);

  it('tears down containers and volumes', async () => {
    const f = fleet!;
    expect(f.volumes().length).toBeGreaterThan(0);
    await f.down();
    fleet = undefined;
    expect(f.containers()).toEqual([]);
    expect(f.volumes()).toEqual([]);
  }, 300_000);
});
