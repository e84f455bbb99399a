import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { extraKey, joinAccount, openSocket, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { banAccount, gatewayOf, recordSocket } from '../support.ts';
import { OwnRedis } from './redisServer.ts';

/**
 * Ban and revoke never depend on a best-effort signal. The ban's notice (through the
 * projector) and the revoke's entry on the push stream (Redis) cut sockets at once when they can;
 * with either path down, the gateways' credential re-check (GATEWAY_CREDENTIAL_CHECK_MS, 2 s, and
 * GATEWAY_BAN_GRACE_MS, 3 s, by default) still cuts them within a bounded time. A Redis of this file's
 * own, so stopping it disturbs no other fleet.
 */
let redis: OwnRedis | undefined;
let fleet: TestFleet;
beforeAll(async () => {
  redis = await OwnRedis.start();
  fleet = await TestFleet.start({ env: { REDIS_URL: redis.url } });
});
afterAll(async () => {
  await fleet?.stop();
  await redis?.stop();
});

const gatewayUrl = (name: 'gateway1' | 'gateway2') => gatewayOf(fleet, name);
const record = recordSocket;

describe('banning an account while the projector is down', () => {
  it('cuts its sockets on both gateways within the grace and the check interval; the notice follows in GET /events', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `ban-down-${fleet.id}@example.com`);
    const s1 = await openSocket(gatewayUrl('gateway1'), acc.apiKey);
    const s2 = await openSocket(gatewayUrl('gateway2'), acc.jwt);
    const [seen1, seen2] = [record(s1), record(s2)];
    await fleet.kill('projector');
    const t0 = Date.now();
    banAccount(fleet, acc.userId);
    await waitFor(() => !s1.connected && !s2.connected, {
      timeoutMs: 15_000,
      what: 'both sockets of the banned account to be cut with the projector down',
    });
    const cutAfter = Date.now() - t0;
    // Bounded: the 3 s grace plus one 2 s check, with slack for a loaded machine.
    expect(cutAfter).toBeLessThan(8000);
    // No notice could reach them: the projector was down.
    expect(seen1).toEqual(['disconnect:io server disconnect']);
    expect(seen2).toEqual(['disconnect:io server disconnect']);
    await expect(openSocket(fleet.url, acc.apiKey)).rejects.toThrow(/banned/i);

    // The notice is still made once the projector is back, and the history keeps it for backfill.
    await fleet.restart('projector');
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    await waitFor(
      async () => {
        const page = await c.rest<OanEventEnvelope[]>('GET', '/events?since=0');
        return page.status === 200 && page.body.some((e) => e.payload.kind === 'account_banned');
      },
      { timeoutMs: 30_000, what: 'the account_banned notice in GET /events' },
    );
  });
});

describe('revoking a key while the push stream is unavailable', () => {
  it('answers 204, and the key’s sockets are cut within the check interval; another key’s stay', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `revoke-down-${fleet.id}@example.com`);
    const keyL = await extraKey(fleet.url, acc.jwt);
    const k1 = await openSocket(gatewayUrl('gateway1'), acc.apiKey);
    const k2 = await openSocket(gatewayUrl('gateway2'), acc.apiKey);
    const l = await openSocket(gatewayUrl('gateway1'), keyL);
    const keys = await new TestConnector({ baseUrl: fleet.url, token: keyL }).rest<
      { id: string; createdAt: string }[]
    >('GET', '/api-keys');
    const kId = [...keys.body].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0]!.id;

    await redis!.kill();
    try {
      const t0 = Date.now();
      const del = await new TestConnector({ baseUrl: fleet.url, token: keyL }).rest(
        'DELETE',
        `/api-keys/${kId}`,
      );
      expect(del.status).toBe(204);
      await waitFor(() => !k1.connected && !k2.connected, {
        timeoutMs: 15_000,
        what: 'the revoked key’s sockets to be cut with Redis down',
      });
      // One 2 s check, with slack for a loaded machine.
      expect(Date.now() - t0).toBeLessThan(6000);
      expect(l.connected).toBe(true);
    } finally {
      await redis!.up();
    }
    l.close();
  });
});
