import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from '@oan/db';
import { Delivery } from '../src/socket/delivery.ts';
import {
  commitAndPublish,
  connect,
  envelope,
  insertAccount,
  insertApiKey,
  insertEvent,
  jwtFor,
  openFleet,
  publish,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
  type TestClient,
} from './helpers.ts';

let fleet: Fleet;
let g1: RunningGateway;
let g2: RunningGateway;
const ws = { transports: ['websocket'] };

beforeAll(async () => {
  fleet = await openFleet();
  g1 = await startGateway(fleet, { id: 'g1' });
  // Slow sweep on g2: its tests prove the live path, not the table sweep.
  g2 = await startGateway(fleet, { id: 'g2', metrics: false, sweepMs: 60_000 });
});

afterAll(async () => {
  await g1?.close();
  await g2?.close();
  await fleet?.close();
});

async function account(): Promise<{ id: string; key: string; keyId: string }> {
  const id = await insertAccount(fleet.orm);
  const { key, id: keyId } = await insertApiKey(fleet.orm, id);
  return { id, key, keyId };
}

const seqs = (c: TestClient) => c.events.map((e) => e.seq);
const close = (...clients: TestClient[]) => clients.forEach((c) => c.socket.close());

describe('live push on one gateway', () => {
  it('starts after the cursor at connect, in seq order, duplicates dropped, gaps filled from the table', async () => {
    const a = await account();
    for (let s = 1; s <= 3; s++) await insertEvent(fleet.orm, a.id, envelope(s));
    const client = await connect(g2.url, { token: a.key }, ws);

    const stored: string[] = [];
    stored[4] = await commitAndPublish(fleet, a.id, envelope(4));
    await publish(fleet, a.id, stored[4]); // duplicate publish
    await waitFor(() => expect(seqs(client)).toEqual(['4']));
    // 5..11 committed, only 12 published (lost publishes): 5..11 come from the table first.
    for (let s = 5; s <= 11; s++) stored[s] = await insertEvent(fleet.orm, a.id, envelope(s));
    stored[12] = await commitAndPublish(fleet, a.id, envelope(12));
    // Out of order: 14 arrives before 13; 13 is filled, then its late publish is a duplicate.
    stored[13] = await insertEvent(fleet.orm, a.id, envelope(13));
    stored[14] = await commitAndPublish(fleet, a.id, envelope(14));
    await publish(fleet, a.id, stored[13]);
    await publish(fleet, a.id, stored[4]); // a stale replay
    await waitFor(() => expect(seqs(client)).toHaveLength(11));

    expect(seqs(client)).toEqual(['4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14']);
    // Nothing but `oan:event`, each with the envelope as its one argument.
    expect(client.log).toEqual(seqs(client).map((s) => `event:${s}`));
    // The pushed object is the stored (= REST) envelope, byte for byte once serialized.
    client.events.forEach((e) => expect(JSON.stringify(e)).toBe(stored[Number(e.seq)]));
    const rest = await g2.app.inject({
      url: '/api/v1/events?since=3',
      headers: { authorization: `Bearer ${a.key}` },
    });
    expect(rest.json()).toEqual(client.events);
    close(client);
  });

  it('catches a socket up from the table when a publish is lost for good (sweep)', async () => {
    const a = await account();
    const client = await connect(g1.url, { token: a.key }, ws);
    await insertEvent(fleet.orm, a.id, envelope(1));
    await insertEvent(fleet.orm, a.id, envelope(2));
    await waitFor(() => expect(seqs(client)).toEqual(['1', '2']));
    close(client);
  });

  it('delivers with the default polling-then-upgrade client too', async () => {
    const a = await account();
    const client = await connect(g2.url, { token: await jwtFor(a.id) });
    await commitAndPublish(fleet, a.id, envelope(1));
    await waitFor(() => expect(seqs(client)).toEqual(['1']));
    close(client);
  });

  it('never sends account A’s events to account B', async () => {
    const [a, b] = [await account(), await account()];
    const ca = await connect(g2.url, { token: a.key }, ws);
    const cb = await connect(g2.url, { token: b.key }, ws);
    await commitAndPublish(fleet, a.id, envelope(1));
    await commitAndPublish(fleet, a.id, envelope(2));
    await commitAndPublish(fleet, b.id, envelope(1, { payload: { mine: 'b' } }));
    await waitFor(() => expect(seqs(ca)).toEqual(['1', '2']));
    await waitFor(() => expect(seqs(cb)).toEqual(['1']));
    expect(cb.events[0]?.payload).toEqual({ mine: 'b' });
    close(ca, cb);
  });

  it('ignores whatever a client emits', async () => {
    const a = await account();
    const client = await connect(g2.url, { token: a.key }, ws);
    client.socket.emit('oan:event', { hello: 1 });
    client.socket.emit('anything', 'x');
    await commitAndPublish(fleet, a.id, envelope(1));
    await waitFor(() => expect(seqs(client)).toEqual(['1']));
    expect(client.socket.connected).toBe(true);
    close(client);
  });
});

describe('two gateways on the same Redis prefix', () => {
  it('each delivers every envelope once to its own sockets', async () => {
    const a = await account();
    const on1 = await connect(g1.url, { token: a.key }, ws);
    const on2 = await connect(g2.url, { token: a.key }, ws);
    for (let s = 1; s <= 5; s++) await commitAndPublish(fleet, a.id, envelope(s));
    await waitFor(() => expect(seqs(on1)).toEqual(['1', '2', '3', '4', '5']));
    await waitFor(() => expect(seqs(on2)).toEqual(['1', '2', '3', '4', '5']));
    expect(on1.socket.io.engine.id).toMatch(/^g1\./);
    expect(on2.socket.io.engine.id).toMatch(/^g2\./);
    close(on1, on2);
  });
});

describe('when an API key is revoked', () => {
  it('disconnects exactly that key’s sockets, on every gateway; the others keep receiving', async () => {
    const a = await account();
    const other = await insertApiKey(fleet.orm, a.id);
    const revoked = [await connect(g1.url, { token: a.key }, ws), await connect(g2.url, { token: a.key })];
    const kept = [
      await connect(g1.url, { token: await jwtFor(a.id) }, ws),
      await connect(g2.url, { token: other.key }, ws),
    ];
    await fleet.redis.xadd(`${fleet.prefix}push`, '*', 't', 'revoke', 'a', a.id, 'k', a.keyId);
    for (const c of revoked) await waitFor(() => expect(c.log).toContain('disconnect:io server disconnect'));

    await commitAndPublish(fleet, a.id, envelope(1));
    for (const c of kept) await waitFor(() => expect(seqs(c)).toEqual(['1']));
    for (const c of kept) expect(c.socket.connected).toBe(true);
    close(...kept);
  });

  it('also cuts a socket whose handshake raced the revoke entry', async () => {
    const a = await account();
    await fleet.redis.xadd(`${fleet.prefix}push`, '*', 't', 'revoke', 'a', a.id, 'k', a.keyId);
    // The key row still exists (the revoke commit is not visible to this handshake yet).
    await waitFor(async () => {
      const c = await connect(g1.url, { token: a.key }, ws);
      await waitFor(() => expect(c.log).toContain('disconnect:io server disconnect'), 1000);
    });
  });
});

describe('when the account is banned', () => {
  it('delivers the account_banned notice to every socket, then disconnects them', async () => {
    const a = await account();
    const clients = [
      await connect(g1.url, { token: a.key }, ws),
      await connect(g2.url, { token: await jwtFor(a.id) }),
    ];
    const notice = envelope(1, {
      type: 'system_notice',
      source: 'platform',
      payload: { kind: 'account_banned' },
    });
    delete notice.goferId;
    await commitAndPublish(fleet, a.id, notice);
    for (const c of clients) {
      await waitFor(() => expect(c.log).toEqual(['event:1', 'disconnect:io server disconnect']));
      expect(c.events[0]?.payload).toEqual({ kind: 'account_banned' });
    }
  });
});

describe('when the ban commits while a handshake is between its ban check and its starting seq', () => {
  it('the socket is cut anyway, though the notice lies at or below its cursor', async () => {
    const a = await account();
    const notice = envelope(1, {
      type: 'system_notice',
      source: 'platform',
      payload: { kind: 'account_banned' },
    });
    delete notice.goferId;
    // The ban and its notice land exactly in the window: after the handshake's credential check,
    // before it reads the account's last seq.
    const original = Object.getOwnPropertyDescriptor(Delivery.prototype, 'startingSeq')!.value as (
      this: Delivery,
      accountId: string,
    ) => Promise<bigint>;
    const spy = vi.spyOn(Delivery.prototype, 'startingSeq').mockImplementationOnce(async function (
      this: Delivery,
      accountId: string,
    ) {
      await sql(fleet.orm.em.fork(), 'update auth.accounts set banned_at = now() where id = ?', [a.id]);
      await insertEvent(fleet.orm, a.id, notice);
      return original.call(this, accountId);
    });
    try {
      const c = await connect(g2.url, { token: a.key }, ws);
      await waitFor(() => expect(c.log).toContain('disconnect:io server disconnect'));
      expect(c.events).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('metrics', () => {
  it('exposes the socket gauge and the delivery counters', async () => {
    const body = (await g1.app.inject('/metrics')).body;
    for (const name of [
      'oan_gateway_sockets_connected',
      'oan_gateway_envelopes_emitted_total',
      'oan_gateway_gap_fills_total',
    ]) {
      expect(body).toContain(name);
    }
  });
});
