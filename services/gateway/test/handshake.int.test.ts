import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  connect,
  connectError,
  insertAccount,
  insertApiKey,
  jwtFor,
  JWT_SECRET,
  openClient,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';
import { INTERNAL_CALL_HEADER, isInternalCall, signOanJwt } from '@oan/auth';
import { sql } from '@oan/db';
import { loadGatewayConfig } from '../src/config.ts';

/**
 * A stand-in for the auth service's internal `connector_outdated` notice endpoint, counting what it
 * gets; like auth it refuses (401, uncounted) a call without the fleet's internal secret.
 */
async function fakeAuth(): Promise<{
  url: string;
  posts: { path: string; body: unknown }[];
  close(): Promise<void>;
}> {
  const posts: { path: string; body: unknown }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (!isInternalCall(JWT_SECRET, req.headers[INTERNAL_CALL_HEADER]))
        return void res.writeHead(401).end();
      posts.push({ path: `${req.method} ${req.url}`, body: JSON.parse(body) as unknown });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

let fleet: Fleet;
let gw: RunningGateway;
let auth: Awaited<ReturnType<typeof fakeAuth>>;
let account: string;
let key: string;

beforeAll(async () => {
  fleet = await openFleet();
  auth = await fakeAuth();
  gw = await startGateway(fleet, { authUrl: auth.url });
  account = await insertAccount(fleet.orm);
  key = (await insertApiKey(fleet.orm, account)).key;
});

afterAll(async () => {
  await gw?.close();
  await auth?.close();
  await fleet?.close();
});

describe('a /oan handshake with a valid credential', () => {
  it.each([
    ['an API key over websocket only', () => key, { transports: ['websocket'] }],
    ['an OAN JWT over websocket only', () => jwtFor(account), { transports: ['websocket'] }],
    ['an API key with the default polling-then-upgrade transports', () => key, {}],
  ])('accepts %s', async (_label, token, opts: { transports?: string[] }) => {
    const client = await connect(gw.url, { token: await token() }, opts);
    expect(client.socket.connected).toBe(true);
    expect(client.socket.io.engine.id).toMatch(/^g1\./);
    client.socket.close();
  });

  it('upgrades a default client from polling to websocket', async () => {
    const client = await connect(gw.url, { token: key });
    await waitFor(() => expect(client.socket.io.engine.transport.name).toBe('websocket'));
    client.socket.close();
  });
});

describe('a /oan socket opened with an OAN JWT', () => {
  it('is cut by the server when the token expires, and the expired token is refused after', async () => {
    // exp has a resolution of seconds: a 2 s token expires between 1 and 2 s from now.
    const token = await signOanJwt(JWT_SECRET, { accountId: account, ttlSeconds: 2 });
    const opened = Date.now();
    const client = await connect(gw.url, { token }, { transports: ['websocket'] });
    const apiKeyClient = await connect(gw.url, { token: key }, { transports: ['websocket'] });
    await waitFor(() => expect(client.log).toContain('disconnect:io server disconnect'), 5000);
    expect(Date.now() - opened).toBeLessThan(2500);
    // A socket of the same account with an API key stays.
    expect(apiKeyClient.socket.connected).toBe(true);
    expect(await connectError(gw.url, { token })).toBe('Unauthorized: invalid token');
    apiKeyClient.socket.close();
  });
});

describe('a /oan handshake that must be refused, with a text the engine treats as terminal', () => {
  it.each([
    ['no token', async () => ({}), 'Unauthorized: invalid token'],
    ['an empty token', async () => ({ token: '' }), 'Unauthorized: invalid token'],
    ['a garbage JWT', async () => ({ token: 'not-a-jwt' }), 'Unauthorized: invalid token'],
    [
      'a JWT signed with another secret',
      async () => ({ token: await signOanJwt('x'.repeat(40), { accountId: account, ttlSeconds: 60 }) }),
      'Unauthorized: invalid token',
    ],
    ['an unknown API key', async () => ({ token: 'gofers_deadbeef' }), 'Unauthorized: invalid API key'],
    [
      'a gofers-realm JWT',
      async () => ({ token: await jwtFor(account, 'gofers') }),
      'Unauthorized: realm not allowed',
    ],
    [
      'a JWT without realm',
      async () => ({ token: await jwtFor(account, null) }),
      'Unauthorized: realm not allowed',
    ],
  ])('refuses %s', async (_label, auth, message) => {
    expect(await connectError(gw.url, await auth(), { transports: ['websocket'] })).toBe(message);
  });

  it('refuses a revoked key', async () => {
    const { key: revoked, id } = await insertApiKey(fleet.orm, account);
    await sql(fleet.orm.em.fork(), 'delete from auth.api_keys where id = ?', [id]);
    expect(await connectError(gw.url, { token: revoked })).toBe('Unauthorized: invalid API key');
  });

  it('refuses a banned account with either credential', async () => {
    const banned = await insertAccount(fleet.orm, { banned: true });
    const bannedKey = (await insertApiKey(fleet.orm, banned)).key;
    expect(await connectError(gw.url, { token: bannedKey })).toBe('Forbidden: account banned');
    expect(await connectError(gw.url, { token: await jwtFor(banned) })).toBe('Forbidden: account banned');
  });

  it('refuses an oan-realm JWT whose account row is of another realm', async () => {
    const mobile = await insertAccount(fleet.orm, { realm: 'gofers' });
    expect(await connectError(gw.url, { token: await jwtFor(mobile) })).toBe(
      'Unauthorized: realm not allowed',
    );
  });
});

describe('the connector release registry is configuration (OAN_CONNECTOR_RELEASES)', () => {
  it('compares declarations with the configured releases, not the built-in ones', async () => {
    const configured = await startGateway(fleet, {
      id: 'g9',
      authUrl: auth.url,
      env: { OAN_CONNECTOR_RELEASES: JSON.stringify({ '@example/new-plugin': '2.0.0' }) },
    });
    try {
      const before = auth.posts.length;
      // Outdated by the built-in registry, unknown to the configured one: no notice.
      const old = await connect(configured.url, {
        token: key,
        client: { name: '@openagentnetwork/dsh-plugin', version: '0.0.1' },
      });
      const outdated = await connect(configured.url, {
        token: key,
        client: { name: '@example/new-plugin', version: '1.9.9' },
      });
      await waitFor(() => expect(auth.posts.length).toBe(before + 1));
      expect(auth.posts[before]!.body).toEqual({
        accountId: account,
        connector: '@example/new-plugin',
        installed: '1.9.9',
        latest: '2.0.0',
      });
      for (const c of [old, outdated]) c.socket.close();
    } finally {
      await configured.close();
    }
  });

  it('refuses a registry that is not a JSON object of versions, naming the variable', async () => {
    for (const bad of ['not json', '["0.1.0"]', '{"@x/y": "latest"}']) {
      expect(() => loadGatewayConfig({ JWT_SECRET: 'x'.repeat(32), OAN_CONNECTOR_RELEASES: bad })).toThrow(
        /OAN_CONNECTOR_RELEASES/,
      );
    }
  });
});

describe('the connector declaration and the connector_outdated notice', () => {
  it('an outdated dsh-plugin triggers exactly one notice request to auth', async () => {
    const before = auth.posts.length;
    const client = await connect(gw.url, {
      token: key,
      client: { name: '@openagentnetwork/dsh-plugin', version: '0.1.4' },
    });
    await waitFor(() => expect(auth.posts.length).toBe(before + 1));
    expect(auth.posts[before]).toEqual({
      path: 'POST /internal/connector-notices',
      body: {
        accountId: account,
        connector: '@openagentnetwork/dsh-plugin',
        installed: '0.1.4',
        latest: '0.1.5',
      },
    });
    client.socket.close();
  });

  it.each([
    ['up to date', { name: '@openagentnetwork/dsh-plugin', version: '0.1.5' }],
    ['a pre-release of the latest', { name: '@openagentnetwork/dsh-plugin', version: '0.1.5-beta.1' }],
    ['ahead of the registry', { name: '@openagentnetwork/dsh-plugin', version: '0.2.0' }],
    ['an unknown connector', { name: '@someone/else', version: '0.0.1' }],
    ['a malformed name', { name: 'bad name!', version: '0.0.1' }],
    ['a numeric version', { name: '@openagentnetwork/dsh-plugin', version: 1 }],
    ['a string', 'dsh-plugin@0.1.4'],
    ['null', null],
    ['an array', ['@openagentnetwork/dsh-plugin', '0.1.4']],
    ['an empty object', {}],
    ['an object name', { name: { '@openagentnetwork/dsh-plugin': true }, version: '0.1.4' }],
    // Outdated but out of bounds (a version is at most 64 characters) ⇒ undeclared, so no notice either.
    ['an over-long version', { name: '@openagentnetwork/dsh-plugin', version: `0.1.4-${'a'.repeat(64)}` }],
    ['an over-long name', { name: `@openagentnetwork/${'x'.repeat(128)}`, version: '0.1.4' }],
  ])('%s connects and triggers no notice', async (_label, declared) => {
    const before = auth.posts.length;
    const client = await connect(gw.url, { token: key, client: declared });
    // An outdated declaration posted after this one would show up first if notices leaked.
    const probe = await connect(gw.url, {
      token: key,
      client: { name: '@openagentnetwork/openclaw-plugin', version: '0.0.1' },
    });
    await waitFor(() => expect(auth.posts.length).toBe(before + 1));
    expect((auth.posts[before]?.body as { connector: string }).connector).toBe(
      '@openagentnetwork/openclaw-plugin',
    );
    client.socket.close();
    probe.socket.close();
  });

  it('an unreachable auth service never fails the handshake', async () => {
    const lonely = await startGateway(fleet, { id: 'g9', authUrl: 'http://127.0.0.1:9', metrics: false });
    try {
      const client = await connect(lonely.url, {
        token: key,
        client: { name: '@openagentnetwork/dsh-plugin', version: '0.0.1' },
      });
      expect(client.socket.connected).toBe(true);
      client.socket.close();
    } finally {
      await lonely.close();
    }
  });
});

describe('when ENABLE_OPEN_API is off', () => {
  it('/oan answers "Invalid namespace"', async () => {
    const off = await startGateway(fleet, { id: 'off', openApi: false, metrics: false });
    try {
      expect(await connectError(off.url, { token: key }, { transports: ['websocket'] })).toBe(
        'Invalid namespace',
      );
      expect(await connectError(off.url, { token: key })).toBe('Invalid namespace');
    } finally {
      await off.close();
    }
  });
});

describe('hostile clients (handshake floods and oversized frames are bounded)', () => {
  it('closes a connection whose frame exceeds the bound, and keeps serving others', async () => {
    const big = openClient(
      gw.url,
      { token: key, padding: 'x'.repeat(64 * 1024) },
      { transports: ['websocket'] },
    );
    const outcome = await new Promise<string>((resolve) => {
      big.socket.once('connect', () => resolve('connected'));
      big.socket.once('connect_error', (err) => resolve(`connect_error: ${err.message}`));
      big.socket.io.once('close', (reason) => resolve(`closed: ${reason}`));
    });
    big.socket.close();
    expect(outcome).toMatch(/^(closed|connect_error)/);
    const ok = await connect(gw.url, { token: key }, { transports: ['websocket'] });
    expect(ok.socket.connected).toBe(true);
    ok.socket.close();
  });

  it('ignores whatever a connected client emits: the socket stays up and nothing is delivered', async () => {
    const c = await connect(gw.url, { token: key }, { transports: ['websocket'] });
    for (const name of ['oan:event', 'message', 'join', 'ack']) {
      c.socket.emit(name, { seq: '999', type: 'system_notice', payload: { kind: 'account_banned' } });
    }
    const probe = await connect(gw.url, { token: key }, { transports: ['websocket'] });
    expect(c.socket.connected).toBe(true);
    expect(probe.events).toEqual([]);
    const rows = await sql<{ n: string }>(
      fleet.orm.em.fork(),
      'select count(*)::text as n from read.oan_event where account_id = ?',
      [account],
    );
    expect(rows[0]!.n).toBe('0');
    c.socket.close();
    probe.socket.close();
  });
});

describe('a flood of half-open handshakes', () => {
  it('drops connections that never join a namespace, while real clients keep connecting', async () => {
    const quick = await startGateway(fleet, { id: 'g9', authUrl: auth.url, handshakeTimeoutMs: 400 });
    try {
      const wsUrl = `${quick.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket`;
      const closed: Promise<void>[] = [];
      const open = (): Promise<WebSocket> =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(wsUrl);
          // Listened for from the start: on a loaded machine the first sockets time out before the
          // last of the flood is open.
          closed.push(new Promise<void>((r) => ws.once('close', () => r())));
          ws.once('message', () => resolve(ws)); // the engine's open packet; no namespace CONNECT follows
          ws.once('error', reject);
        });
      const flood = await Promise.all(Array.from({ length: 200 }, open));
      const real = await connect(quick.url, { token: key }, { transports: ['websocket'] });
      expect(real.socket.connected).toBe(true);
      await Promise.all(closed);
      expect(flood.every((ws) => ws.readyState === WebSocket.CLOSED)).toBe(true);
      // The real client outlives the timeout: it joined /oan.
      await new Promise((r) => setTimeout(r, 600));
      expect(real.socket.connected).toBe(true);
      real.socket.close();
    } finally {
      await quick.close();
    }
  });
});
