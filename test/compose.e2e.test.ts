import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { postJson, TestConnector, waitFor } from '@oan/testing';
import { ComposeFleet, composeTestWanted } from './composeFleet.ts';
import { projectionCaughtUp, readTablesOf } from './faults/database.ts';
import { dumpEventTable, dumpTables, withClient } from './support.ts';

/**
 * The docker-compose fleet on local images, through the edge's published loopback port, started as
 * `docker-compose up --scale auth=2 --scale gofers=2 --scale matching=2 --scale conversations=2
 * --scale outbox=2 --scale projector=2 --scale agents=2 --scale gateway=3` (ADR 0039): a journey
 * over every replica, then one replica of each scaled kind stopped or killed, then the rest of the
 * journey on the survivors, with nothing lost.
 */
const wanted = composeTestWanted();
if (!wanted.run) console.warn(`compose e2e skipped: ${wanted.reason}`);

/** Replicas per compose service; runtimes and the edge keep the file's one. */
const SCALE = {
  auth: 2,
  gofers: 2,
  matching: 2,
  conversations: 2,
  // the outbox publisher (the event relay to Kafka)
  outbox: 2,
  // The topics have one partition: one replica consumes, the other stands by.
  projector: 2,
  // the ConnectOnion agent relay
  agents: 2,
  gateway: 3,
};
type Scaled = keyof typeof SCALE;

const email = `compose-${randomBytes(4).toString('hex')}@example.com`;
let fleet: ComposeFleet | undefined;
let apiKey = '';
let c: TestConnector;
let goferId = '';
/** The cursor before the first raw socket opened: every one of them must hold what came after it. */
let socketsFrom = '';
const sockets: { gateway: string; socket: Socket; pushes: OanEventEnvelope[] }[] = [];
/** Every chat message the journey posted (each answered 202), by Gofer. */
const posted = new Map<string, string[]>();
/** The containers ended in the middle of the journey, by service. */
const ended = new Map<Scaled, string>();

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
  return { gateway: gatewayOf(socket), socket, pushes };
}

/** Engine.IO session ids are `<GATEWAY_ID>.<random>` (services/edge/src/gateways.ts). */
const gatewayOf = (socket: Socket) => socket.io.engine.id.split('.')[0]!;

const ofGofer = (events: OanEventEnvelope[], id = goferId) => events.filter((e) => e.goferId === id);
const chatReplies = (events: OanEventEnvelope[]) =>
  events.filter((e) => e.type === 'gofer_message' && e.goferId === goferId);

/** Posts a chat message and waits for the Gofer's next envelope on the connector. */
async function chat(id: string, content: string) {
  const before = ofGofer(c.delivered, id).length;
  const res = await c.rest('POST', `/gofers/${id}/chat/messages`, { content });
  expect(res.status, res.text).toBe(202);
  posted.set(id, [...(posted.get(id) ?? []), content]);
  await waitFor(() => ofGofer(c.delivered, id).length > before, { timeoutMs: 60_000, what: 'the next turn' });
}

/** Every envelope of the account after `since`, page by page. */
async function history(since = '0') {
  const all: OanEventEnvelope[] = [];
  for (let from = since; ;) {
    const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${from}&limit=200`);
    expect(page.status, page.text).toBe(200);
    all.push(...page.body);
    if (page.body.length < 200) return all;
    from = page.body.at(-1)!.seq;
  }
}

/** Signs in by email (the fixed code) and redeems a pairing code: a connector's API key. */
async function signIn(url: string) {
  const req = await postJson(url, '/auth/oan/email/request-code', { email });
  expect(req.status, req.text).toBe(200);
  const verify = await postJson(url, '/auth/oan/email/verify', {
    email,
    code: fleet!.loginCode,
    platform: 'other',
  });
  expect(verify.status, verify.text).toBe(200);
  const pairing = await postJson(url, '/auth/oan/pairing-codes', undefined, verify.body.token as string);
  expect(pairing.status, pairing.text).toBe(200);
  const redeem = await postJson(url, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
  expect(redeem.status, redeem.text).toBe(200);
  return redeem.body.apiKey as string;
}

/** Publishes a new device key (a command to conversations); the key's id. */
async function publishKey(): Promise<string> {
  const jwk = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' });
  const keyId = randomUUID();
  const res = await c.rest('PUT', `/keys/${keyId}`, { publicKey: jwk.x });
  expect(res.status, res.text).toBe(201);
  return keyId;
}

/** The pino lines of the service's containers (stopped ones included), by container id. */
function logsOf(service: Scaled): Map<string, Record<string, unknown>[]> {
  return new Map(
    fleet!
      .containers()
      .filter((k) => k.service === service)
      .map((k) => [k.id, fleet!.logLines(k.id)]),
  );
}

/** The container that logged a line `match` accepts last. */
function lastToLog(service: Scaled, match: (l: Record<string, unknown>) => boolean): string | undefined {
  return [...logsOf(service)]
    .flatMap(([id, lines]) => lines.filter(match).map((l) => ({ id, time: Number(l.time) })))
    .sort((x, y) => x.time - y.time)
    .at(-1)?.id;
}

describe.skipIf(!wanted.run)('the docker-compose fleet on local images, scaled', () => {
  beforeAll(async () => {
    fleet = await ComposeFleet.start(email, SCALE);
    apiKey = await signIn(fleet.url);
    // From seq 0: it must deliver the account's whole history.
    c = new TestConnector({ baseUrl: fleet.url, token: apiKey, cursor: '0' });
    await c.connect();
  }, 1_800_000);
  afterAll(async () => {
    c?.close();
    for (const s of sockets) s.socket.close();
    await fleet?.down();
  }, 180_000);

  it('runs as many containers of each service as --scale asked for', () => {
    const running = Object.fromEntries(
      Object.keys({ ...SCALE, runtimes: 1, edge: 1 }).map((service) => [
        service,
        fleet!.running(service).length,
      ]),
    );
    expect(running).toEqual({ ...SCALE, runtimes: 1, edge: 1 });
  });

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
    const res = await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
      content: 'I want to hire a backend engineer.',
    });
    expect(res.status).toBe(202);
    posted.set(goferId, ['I want to hire a backend engineer.']);
    const reply = await waitFor(
      () => chatReplies(c.delivered).find((e) => e.payload.content !== created.body.greeting),
      { timeoutMs: 60_000, what: 'the reply on the socket' },
    );
    const events = await c.rest<OanEventEnvelope[]>('GET', '/events?since=0&limit=200');
    expect(events.body.map((e) => e.eventId)).toContain(reply.eventId);
  }, 300_000);

  it('spreads sockets over the three gateways, each getting every envelope once, in order', async () => {
    // Each replica's GATEWAY_ID is `auto`: its hostname, which compose makes the container's short id.
    const ids = fleet!.running('gateway').map((id) => id.slice(0, 12));
    expect(new Set(ids).size).toBe(3);
    socketsFrom = (await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq;
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
    for (const text of ['Remote, TypeScript and Postgres.', 'A small fintech team.', 'Call you Scout.'])
      await chat(goferId, text);
    const truth = await waitFor(
      async () => {
        const all = await history(socketsFrom);
        const ids = all.map((e) => e.eventId).join();
        return sockets.every((s) => s.pushes.map((e) => e.eventId).join() === ids) ? all : undefined;
      },
      { timeoutMs: 30_000, what: 'every socket to hold exactly what GET /events holds' },
    );
    expect(ofGofer(truth).length).toBeGreaterThanOrEqual(3);
  }, 300_000);

  it('spreads the commands over the replicas of a service (the edge balances requests)', async () => {
    await publishKey();
    // Every gofers replica logged some of the chat messages the edge forwarded.
    const chats = [...logsOf('gofers')].map(
      ([, lines]) =>
        lines.filter((l) => {
          const req = l.req as { method?: string; url?: string } | undefined;
          return (
            l.msg === 'incoming request' &&
            req?.method === 'POST' &&
            req.url?.endsWith(`/gofers/${goferId}/chat/messages`)
          );
        }).length,
    );
    expect(chats).toHaveLength(2);
    expect(chats.reduce((a, b) => a + b)).toBe(posted.get(goferId)!.length);
    for (const n of chats)
      expect(n, `chat messages per gofers replica: ${chats.join(', ')}`).toBeGreaterThan(0);
  }, 60_000);

  it('completes the journey with one replica of each scaled kind stopped or killed, losing nothing', async () => {
    // The replicas that hold something are the ones ended: the projector consuming oan.events, the
    // outbox publisher of the gofers schema, the gateway holding the connector's socket.
    const projector = lastToLog(
      'projector',
      (l) =>
        l.msg === 'kafka consumer joined group' &&
        String(l.groupId).endsWith('projector.oan') &&
        Object.values((l.assignment ?? {}) as Record<string, unknown[]>).some((p) => p.length > 0),
    );
    const outbox = lastToLog(
      'outbox',
      (l) => l.msg === 'outbox publisher is leader' && l.schema === 'gofers',
    );
    const gateway = fleet!.running('gateway').find((id) => id.startsWith(gatewayOf(c.socket!)));
    const victims: [Scaled, string | undefined, 'stop' | 'kill'][] = [
      ['auth', fleet!.running('auth')[0], 'kill'],
      ['gofers', fleet!.running('gofers')[0], 'stop'],
      ['matching', fleet!.running('matching')[0], 'kill'],
      ['conversations', fleet!.running('conversations')[0], 'stop'],
      ['outbox', outbox, 'kill'],
      ['projector', projector, 'kill'],
      ['agents', fleet!.running('agents')[0], 'stop'],
      ['gateway', gateway, 'kill'],
    ];
    expect(victims.map(([s]) => s).sort()).toEqual(Object.keys(SCALE).sort());
    for (const [service, id] of victims) {
      expect(id, service).toBeDefined();
      ended.set(service, id!);
    }
    await Promise.all(victims.map(([, id, how]) => fleet!.end(id!, how)));
    for (const [service, n] of Object.entries(SCALE))
      expect(fleet!.running(service), service).toHaveLength(n - 1);

    // The rest of the journey on the survivors: sign in again, the Gofer's interview goes on, a new
    // Gofer, a device key, and reads from every service.
    const again = new TestConnector({ baseUrl: fleet!.url, token: await signIn(fleet!.url) });
    expect((await again.rest('GET', '/gofers')).status).toBe(200);
    for (const text of ['Senior, with on-call experience.', 'Yes, that is right.']) await chat(goferId, text);
    const second = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
    expect(second.status, second.text).toBe(201);
    await chat(second.body.goferId, 'I am looking for a data engineer.');
    const key = await publishKey();
    const keys = await c.rest<{ keys: { keyId: string }[] }>('GET', '/keys');
    expect(keys.body.keys.map((k) => k.keyId)).toContain(key);
    for (let i = 0; i < 4; i++) {
      expect((await c.rest('GET', '/threads')).status).toBe(200);
      const lookup = await fetch(`${fleet!.url}/api/agents/0x${randomBytes(32).toString('hex')}`);
      expect(lookup.status, await lookup.text()).toBeLessThan(500);
    }

    // Nothing lost. The connector (its socket's gateway was killed: it reconnected and caught up)
    // delivered GET /events's history, each envelope once, in order; so did every raw socket on the
    // two gateways left, from when it opened.
    expect(c.disconnects.length).toBeGreaterThan(0);
    const left = sockets.filter((s) => !ended.get('gateway')!.startsWith(s.gateway));
    expect(left.length).toBeGreaterThanOrEqual(4);
    const ids = (events: OanEventEnvelope[]) => events.map((e) => e.eventId).join();
    const all = await waitFor(
      async () => {
        const all = await history();
        await c.idle();
        const since = ids(all.filter((e) => BigInt(e.seq) > BigInt(socketsFrom)));
        return ids(c.delivered) === ids(all) && left.every((s) => ids(s.pushes) === since) ? all : undefined;
      },
      { timeoutMs: 30_000, what: 'the connector and every socket left to hold what GET /events holds' },
    );
    expect(all.length).toBeGreaterThan(posted.size * 3);
    // The account's event table: seq dense from 1, the rows GET /events served.
    await withClient(fleet!.databaseUrl, async (db) => {
      const rows = await db.query<{ seq: string; event_id: string }>(
        `select seq::text as seq, event_id from read.oan_event
          where account_id = (select account_id from read.oan_event where event_id = $1) order by seq`,
        [all[0]!.eventId],
      );
      expect(rows.rows.map((r) => Number(r.seq))).toEqual(rows.rows.map((_, i) => i + 1));
      expect(rows.rows.map((r) => r.event_id).join()).toBe(ids(all));
    });
    // Every chat message is in its Gofer's chat once.
    for (const [id, texts] of posted) {
      const messages = await c.rest<{ role: string; content: string }[]>(
        'GET',
        `/gofers/${id}/chat/messages`,
      );
      expect(messages.body.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(texts);
    }
    again.close();
  }, 600_000);

  it('rebuilds identical read models with the replay run in the fleet while the projector is stopped', async () => {
    const url = fleet!.databaseUrl;
    const tables = await readTablesOf(url);
    // What the replay must rebuild: everything stored, applied (the standby took over a killed projector).
    await waitFor(() => projectionCaughtUp(url), {
      timeoutMs: 60_000,
      what: 'the projector to have applied every stored event',
    });
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

  it('ran every container as a non-root user, none restarted (the ended ones stayed down)', () => {
    const containers = fleet!.containers();
    expect(containers.length).toBeGreaterThanOrEqual(4 + Object.values(SCALE).reduce((a, b) => a + b) + 2);
    const down = new Set(ended.values());
    for (const k of containers) {
      expect(k.restarts, `${k.service} restarts`).toBe(0);
      if (k.service === 'projector' || down.has(k.id)) expect(k.status, k.service).toBe('exited');
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
