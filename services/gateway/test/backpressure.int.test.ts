import type { Socket as TcpSocket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { MAX_BUFFERED_BYTES, MAX_QUEUED_PACKETS } from '../src/socket/backlog.ts';
import {
  commitAndPublish,
  connect,
  envelope,
  insertAccount,
  insertApiKey,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
  type TestClient,
} from './helpers.ts';

let fleet: Fleet;
let g: RunningGateway;
const ws = { transports: ['websocket'] };

beforeAll(async () => {
  fleet = await openFleet();
  // Slow sweep: the live path alone must deliver to the healthy socket.
  g = await startGateway(fleet, { id: 'g1', sweepMs: 60_000 });
});

afterAll(async () => {
  await g?.close();
  await fleet?.close();
});

const seqs = (c: { events: OanEventEnvelope[] }) => c.events.map((e) => Number(e.seq));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** 16 KiB payloads, so the kernel's socket buffers fill and the backlog builds in a few waves. */
const big = (seq: number) => envelope(seq, { payload: { text: `${seq}:${'x'.repeat(16 * 1024)}` } });

/** The client's TCP socket under socket.io-client → engine.io-client → ws (Node). */
function tcpOf(client: TestClient): TcpSocket {
  const transport = client.socket.io.engine.transport as unknown as { ws?: { _socket?: TcpSocket } };
  const tcp = transport.ws?._socket;
  if (!tcp) throw new Error('no websocket TCP socket on the client');
  return tcp;
}

async function cuts(): Promise<Record<string, number>> {
  const text = (await g.app.inject({ url: '/metrics' })).body;
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^oan_gateway_slow_socket_disconnects_total\{limit="(\w+)"\} (\d+)$/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}
const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

async function backfill(key: string, cursor: number): Promise<OanEventEnvelope[]> {
  const all: OanEventEnvelope[] = [];
  for (;;) {
    const since = all.length ? Number(all[all.length - 1]!.seq) : cursor;
    const res = await g.app.inject({
      url: `/api/v1/events?since=${since}&limit=200`,
      headers: { authorization: `Bearer ${key}` },
    });
    const page = res.json<OanEventEnvelope[]>();
    all.push(...page);
    if (page.length < 200) return all;
  }
}

describe('when one socket of an account stops reading (bounded backlog)', () => {
  it('cuts it past the bound while the other socket gets every envelope in order; backfill recovers', async () => {
    const accountId = await insertAccount(fleet.orm);
    const { key } = await insertApiKey(fleet.orm, accountId);
    const healthy = await connect(g.url, { token: key }, ws);
    const stalled = await connect(g.url, { token: key }, ws);
    tcpOf(stalled).pause();
    const before = await cuts();

    // Waves until the server cuts the stalled socket: how much the kernel buffers absorb before the
    // backlog builds in the gateway varies by machine (loopback autotuning), hence no fixed count.
    let n = 0;
    while (total(await cuts()) === total(before)) {
      if (n >= 4000) throw new Error(`stalled socket not cut after ${n} envelopes`);
      for (let i = 0; i < 100; i++) await commitAndPublish(fleet, accountId, big(++n));
      // The healthy socket keeps up with each wave: the stalled one holds nothing up.
      await waitFor(() => expect(healthy.events).toHaveLength(n), 5000);
    }
    const cutAt = n;
    for (let i = 0; i < 20; i++) await commitAndPublish(fleet, accountId, big(++n));
    await waitFor(() => expect(healthy.events).toHaveLength(n), 5000);
    expect(seqs(healthy)).toEqual(range(1, n));
    expect(healthy.socket.connected).toBe(true);
    // 16 KiB envelopes pass MAX_BUFFERED_BYTES (4 MiB) long before MAX_QUEUED_PACKETS (1,000).
    expect(MAX_BUFFERED_BYTES / (16 * 1024)).toBeLessThan(MAX_QUEUED_PACKETS);
    expect(await cuts()).toEqual({ ...before, bytes: (before.bytes ?? 0) + 1 });

    // Reading again, the client drains what the kernel held, then sees the server's close.
    tcpOf(stalled).resume();
    await waitFor(() => expect(stalled.log.at(-1)).toMatch(/^disconnect:transport (close|error)$/), 10_000);
    const cursor = stalled.events.length;
    expect(seqs(stalled)).toEqual(range(1, cursor));
    expect(cursor).toBeLessThan(cutAt);

    // As a client reconnects: a fresh socket, then backfill from the cursor; live pushes after it continue the run.
    const fresh = await connect(g.url, { token: key }, ws);
    const rest = await backfill(key, cursor);
    expect(seqs({ events: rest })).toEqual(range(cursor + 1, n));
    await commitAndPublish(fleet, accountId, big(++n));
    await waitFor(() => expect(seqs(fresh)).toEqual([n]));
    expect([...seqs(stalled), ...seqs({ events: rest }), ...seqs(fresh)]).toEqual(range(1, n));
    [healthy, stalled, fresh].forEach((c) => c.socket.close());
  });
});
