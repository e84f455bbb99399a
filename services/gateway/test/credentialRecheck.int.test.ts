import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import {
  connect,
  insertAccount,
  insertApiKey,
  jwtFor,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';

/**
 * A socket never outlives its credential by more than a bounded time, even when the signal
 * that normally cuts it at once (the revoke entry on the push stream, the ban's notice) never comes.
 * Here no signal is sent at all: only the credential view changes, as auth writes it.
 */
let fleet: Fleet;
let gw: RunningGateway;
beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet, {
    env: { GATEWAY_CREDENTIAL_CHECK_MS: '200', GATEWAY_BAN_GRACE_MS: '1500' },
  });
});
afterAll(async () => {
  await gw?.close();
  await fleet?.close();
});

describe('the gateway re-reads every socket’s credential on a timer', () => {
  it('cuts the sockets of a key deleted without a revoke entry, and only those', async () => {
    const account = await insertAccount(fleet.orm);
    const k = await insertApiKey(fleet.orm, account);
    const other = await insertApiKey(fleet.orm, account);
    const [s1, s2, keep, viaJwt] = await Promise.all([
      connect(gw.url, { token: k.key }),
      connect(gw.url, { token: k.key }),
      connect(gw.url, { token: other.key }),
      connect(gw.url, { token: await jwtFor(account) }),
    ]);
    const t0 = Date.now();
    await sql(fleet.orm.em.fork(), 'delete from auth.api_keys where id = ?', [k.id]);
    await waitFor(() => {
      expect([s1.socket.connected, s2.socket.connected]).toEqual([false, false]);
    });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(s1.log).toEqual(['disconnect:io server disconnect']);
    expect([keep.log, viaJwt.log]).toEqual([[], []]);
    expect(keep.socket.connected).toBe(true);
    expect(viaJwt.socket.connected).toBe(true);
    for (const c of [keep, viaJwt]) c.socket.close();
  });

  it('cuts the sockets of an expired key', async () => {
    const account = await insertAccount(fleet.orm);
    const k = await insertApiKey(fleet.orm, account, { expiresAt: new Date(Date.now() + 60_000) });
    const s = await connect(gw.url, { token: k.key });
    await sql(fleet.orm.em.fork(), `update auth.api_keys set expires_at = now() where id = ?`, [k.id]);
    await waitFor(() => expect(s.socket.connected).toBe(false));
    expect(s.log).toEqual(['disconnect:io server disconnect']);
  });

  it('cuts every socket of a banned account once the ban is older than the grace, notice or not', async () => {
    const account = await insertAccount(fleet.orm);
    const k = await insertApiKey(fleet.orm, account);
    const [viaKey, viaJwt] = await Promise.all([
      connect(gw.url, { token: k.key }),
      connect(gw.url, { token: await jwtFor(account) }),
    ]);
    const bystander = await connect(gw.url, {
      token: (await insertApiKey(fleet.orm, await insertAccount(fleet.orm))).key,
    });
    const t0 = Date.now();
    await sql(fleet.orm.em.fork(), 'update auth.accounts set banned_at = now() where id = ?', [account]);
    // Within the grace the sockets wait for the ban's notice (which cuts them after delivering itself).
    await new Promise((r) => setTimeout(r, 800));
    expect(viaKey.socket.connected).toBe(true);
    await waitFor(() => {
      expect([viaKey.socket.connected, viaJwt.socket.connected]).toEqual([false, false]);
    }, 6000);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(1500);
    expect(elapsed).toBeLessThan(3500);
    expect(viaJwt.log).toEqual(['disconnect:io server disconnect']);
    expect(bystander.socket.connected).toBe(true);
    bystander.socket.close();
  });
});
