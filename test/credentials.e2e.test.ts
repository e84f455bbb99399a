import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { extraKey, joinAccount, openSocket, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { banAccount, gatewayOf, recordSocket } from './support.ts';

let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  await fleet?.stop();
});

const gatewayUrl = (name: 'gateway1' | 'gateway2') => gatewayOf(fleet, name);
const record = recordSocket;

describe('revoking a key', () => {
  it('disconnects exactly that key’s sockets on both gateways; the JWT and another key stay connected', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `revoke-${fleet.id}@example.com`);
    const keyL = await extraKey(fleet.url, acc.jwt);
    const k1 = await openSocket(gatewayUrl('gateway1'), acc.apiKey);
    const k2 = await openSocket(gatewayUrl('gateway2'), acc.apiKey);
    const jwtSocket = await openSocket(gatewayUrl('gateway1'), acc.jwt);
    const lSocket = await openSocket(gatewayUrl('gateway2'), keyL);
    const [k1Seen, k2Seen, jwtSeen, lSeen] = [record(k1), record(k2), record(jwtSocket), record(lSocket)];

    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const keys = await c.rest<{ id: string; createdAt: string }[]>('GET', '/api-keys');
    expect(keys.body).toHaveLength(2);
    // Metadata only (no key material): K was redeemed before L, so K is the older entry.
    const kId = [...keys.body].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0]!.id;
    const del = await new TestConnector({ baseUrl: fleet.url, token: keyL }).rest(
      'DELETE',
      `/api-keys/${kId}`,
    );
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    // Right after the 204 every service refuses K.
    const after = await c.rest<{ code: string }>('GET', '/events/cursor');
    expect(after.status).toBe(401);
    expect((await c.rest('GET', '/api-keys')).status).toBe(401);
    await expect(openSocket(fleet.url, acc.apiKey)).rejects.toThrow(/unauthorized/i);

    await waitFor(
      () =>
        k1Seen.includes('disconnect:io server disconnect') &&
        k2Seen.includes('disconnect:io server disconnect'),
      {
        what: 'both K sockets to be disconnected',
      },
    );
    expect(jwtSocket.connected).toBe(true);
    expect(lSocket.connected).toBe(true);
    expect(jwtSeen).toEqual([]);
    expect(lSeen).toEqual([]);
    for (const s of [k1, k2, jwtSocket, lSocket]) s.close();
  });
});

describe('banning an account', () => {
  it('pushes the account_banned notice before the disconnect, keeps it in GET /events, and refuses new handshakes', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `ban-${fleet.id}@example.com`);
    const s1 = await openSocket(gatewayUrl('gateway1'), acc.apiKey);
    const s2 = await openSocket(gatewayUrl('gateway2'), acc.jwt);
    const pushed: OanEventEnvelope[] = [];
    s1.on('oan:event', (e: OanEventEnvelope) => pushed.push(e));
    const [seen1, seen2] = [record(s1), record(s2)];

    banAccount(fleet, acc.userId);

    await waitFor(
      () =>
        seen1.includes('disconnect:io server disconnect') &&
        seen2.includes('disconnect:io server disconnect'),
      {
        timeoutMs: 20_000,
        what: 'both sockets to be disconnected',
      },
    );
    for (const seen of [seen1, seen2]) {
      expect(seen).toEqual(['event:system_notice:account_banned', 'disconnect:io server disconnect']);
    }
    await expect(openSocket(fleet.url, acc.apiKey)).rejects.toThrow(/banned/i);
    await expect(openSocket(fleet.url, acc.jwt)).rejects.toThrow(/banned/i);

    // The same envelope is in GET /events: the history stays readable so that a connector whose
    // cursor precedes the notice sees it on backfill and stops (docs/adr/0008).
    const page = await new TestConnector({ baseUrl: fleet.url, token: acc.apiKey }).rest<OanEventEnvelope[]>(
      'GET',
      '/events?since=0',
    );
    expect(page.status).toBe(200);
    expect(page.body).toEqual(pushed);
    expect(pushed).toHaveLength(1);
    // Everything else is refused for a banned account, 403 "Forbidden: account banned".
    const keys = await new TestConnector({ baseUrl: fleet.url, token: acc.apiKey }).rest<{
      error: string;
      code: string;
    }>('GET', '/api-keys');
    expect(keys).toMatchObject({
      status: 403,
      body: { error: 'Forbidden: account banned', code: 'FORBIDDEN' },
    });
    s1.close();
    s2.close();
  });
});
