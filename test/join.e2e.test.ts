import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  joinAccount,
  mergedOpenApi,
  openSocket,
  postJson,
  REPO_ROOT,
  TestConnector,
  TestFleet,
  waitFor,
  type JoinedAccount,
} from '@oan/testing';
import type { OanEventEnvelope } from '@oan/protocol';

let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  await fleet?.stop();
});

const email = () => `c${randomBytes(4).toString('hex')}@example.com`;

describe('a connector joining an account through the edge', () => {
  let acc: JoinedAccount;

  it('answers the health probe outside /api/v1', async () => {
    const res = await fetch(`${fleet.url}/api/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('runs request code → mailed code → verify → pairing code → redeem', async () => {
    acc = await joinAccount(fleet.url, fleet.mailbox, email(), 'dsh');
    expect(acc.apiKey).toMatch(/^gofers_[A-Za-z0-9_-]+$/);
    expect(acc.userId).not.toBe('');
  });

  it('the API key works on REST right away, starting from cursor "0"', async () => {
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const cursor = await c.rest<{ seq: string }>('GET', '/events/cursor');
    expect(cursor).toMatchObject({ status: 200, body: { seq: '0' } });
    const keys = await c.rest<unknown[]>('GET', '/api-keys');
    expect(keys.status).toBe(200);
    expect(keys.text).not.toContain(acc.apiKey);
    const page = await c.rest<unknown[]>('GET', '/events?since=0&limit=10');
    expect(page).toMatchObject({ status: 200, body: [] });
  });

  it('the API key and the JWT open /oan sockets, websocket-only and polling-then-upgrade', async () => {
    for (const token of [acc.apiKey, acc.jwt]) {
      for (const transports of [['websocket'], ['polling', 'websocket']] as const) {
        const s = await openSocket(fleet.url, token, { transports: [...transports] });
        expect(s.connected).toBe(true);
        s.close();
      }
    }
  });

  it('refuses to redeem the same pairing code twice', async () => {
    const pairing = await postJson(fleet.url, '/auth/oan/pairing-codes', undefined, acc.jwt);
    expect(pairing.status).toBe(200);
    expect(pairing.body.code).toMatch(/^[0-9a-f]{16}$/);
    const first = await postJson(fleet.url, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
    expect(first.status).toBe(200);
    const again = await postJson(fleet.url, '/auth/oan/pairing-codes/redeem', { code: pairing.body.code });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'errors.invalidPairingCode', code: 'UNAUTHORIZED' });
  });

  it('an outdated connector is told once: one connector_outdated notice however often it reconnects', async () => {
    const client = { name: '@openagentnetwork/dsh-plugin', version: '0.1.4' };
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey, cursor: '0', client });
    await c.connect();
    await waitFor(() => c.delivered.length >= 1, { what: 'the connector_outdated notice' });
    c.close();
    const again = new TestConnector({ baseUrl: fleet.url, token: acc.jwt, cursor: '0', client });
    await again.connect();
    const upToDate = await openSocket(fleet.url, acc.apiKey, { client: { ...client, version: '0.1.5' } });
    upToDate.close();
    // A sentinel declared after them: once its notice is visible, a (wrong) second dsh notice, asked
    // for earlier on the same account's ordered path, would be visible too.
    const sentinel = await openSocket(fleet.url, acc.apiKey, {
      client: { name: '@openagentnetwork/openclaw-plugin', version: '0.2.7' },
    });
    sentinel.close();
    const page = await waitFor(
      async () => {
        const p = await again.rest<OanEventEnvelope[]>('GET', '/events?since=0');
        return p.body.some((e) => e.payload.connector === '@openagentnetwork/openclaw-plugin')
          ? p
          : undefined;
      },
      { what: 'the sentinel notice' },
    );
    const notices = page.body.filter((e) => e.payload.connector === client.name);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.payload).toEqual({
      kind: 'connector_outdated',
      connector: client.name,
      installed: '0.1.4',
      latest: '0.1.5',
    });
    expect(notices[0]).toEqual(c.delivered[0]);
    again.close();
  });

  it('never writes the API key, the JWT, a pairing code or an email code to any log', async () => {
    const mailed = fleet.mailbox.messages
      .map((m) => /\b(\d{6})\b/.exec(m.raw)?.[1])
      .filter(Boolean) as string[];
    const pairing = await postJson(fleet.url, '/auth/oan/pairing-codes', undefined, acc.jwt);
    const logs = fleet.lines.join('\n');
    for (const secret of [acc.apiKey, acc.jwt, String(pairing.body.code)]) {
      expect(logs.includes(secret), 'a credential reached a log line').toBe(false);
    }
    // A bare 6-digit run can occur inside timestamps or ids, so codes are looked for as values.
    for (const code of mailed) {
      expect(new RegExp(`["=:' ]${code}["',} ]`).test(logs), 'an email code reached a log line').toBe(false);
    }
  });

  it('rejects an unknown gofers_ key with 401 UNAUTHORIZED on REST and on the socket', async () => {
    const c = new TestConnector({ baseUrl: fleet.url, token: 'gofers_deadbeef' });
    const r = await c.rest<{ error: string; code: string }>('GET', '/events/cursor');
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHORIZED');
    expect(r.body.error).toMatch(/Unauthorized/);
    await expect(openSocket(fleet.url, 'gofers_deadbeef')).rejects.toThrow(/unauthorized/i);
  });
});

describe('docs/openapi.json', () => {
  it('is what the running services generate from their route schemas (run `npm run openapi`)', async () => {
    const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/openapi.json'), 'utf8')) as unknown;
    expect(await mergedOpenApi(fleet)).toEqual(committed);
  });
});
