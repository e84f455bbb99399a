/**
 * The two loads bench/replicas.ts drives through a fleet: commands through the edge, timed until their
 * envelopes reach the owners' sockets, and events appended straight to an event store, timed until
 * their envelopes are rows of `read.oan_event`.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Socket } from 'socket.io-client';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, openSocket, waitFor, type JoinedAccount, type TestFleet } from '@oan/testing';
import { benchNotice } from './fleet.ts';
import type { Percentiles } from './raw.ts';
import { percentiles } from './stats.ts';

export interface Loaded {
  count: number;
  perSecond: number;
}

export async function joinAccounts(fleet: TestFleet, n: number): Promise<JoinedAccount[]> {
  const accounts: JoinedAccount[] = [];
  for (let i = 0; i < n; i += 8) {
    const batch = Array.from({ length: Math.min(8, n - i) }, (_, j) =>
      joinAccount(fleet.url, fleet.mailbox, `rep-${i + j}-${fleet.id}@example.com`),
    );
    accounts.push(...(await Promise.all(batch)));
  }
  return accounts;
}

/**
 * `POST /gofers` round robin over the accounts (each appends GoferCreated and the greeting, which
 * becomes one `gofer_message`), `concurrency` in flight. A command's latency runs from its request
 * to its envelope on the owner's socket, matched by the Gofer id the answer names.
 */
export async function commandLoad(fleet: TestFleet, accounts: JoinedAccount[]) {
  const sockets: Socket[] = [];
  let sentAt = new Map<string, number>();
  // An envelope can overtake the answer that names its Gofer.
  let arrivedAt = new Map<string, number>();
  let latencies: number[] = [];
  let lastAt = 0;
  const arrived = (goferId: string, at: number) => {
    const t0 = sentAt.get(goferId);
    if (t0 === undefined) arrivedAt.set(goferId, at);
    else latencies.push(at - t0);
  };
  for (const acc of accounts) {
    const s = await openSocket(fleet.url, acc.apiKey);
    s.on('oan:event', (e: OanEventEnvelope) => {
      if (e.type !== 'gofer_message' || !e.goferId) return;
      lastAt = performance.now();
      arrived(e.goferId, lastAt);
    });
    sockets.push(s);
  }
  return {
    async run(count: number, concurrency: number): Promise<Loaded & { latency: Percentiles }> {
      sentAt = new Map();
      arrivedAt = new Map();
      latencies = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let i = next++; i < count; i = next++) {
            const acc = accounts[i % accounts.length]!;
            const started = performance.now();
            const res = await fetch(`${fleet.url}/api/v1/gofers`, {
              method: 'POST',
              headers: { authorization: `Bearer ${acc.apiKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ locale: 'en' }),
            });
            const body = (await res.json()) as { goferId?: string };
            if (res.status !== 201 || !body.goferId) throw new Error(`POST /gofers: ${res.status}`);
            sentAt.set(body.goferId, started);
            const early = arrivedAt.get(body.goferId);
            if (early !== undefined) latencies.push(early - started);
          }
        }),
      );
      await waitFor(() => latencies.length >= count, { timeoutMs: 300_000, what: 'gofer_message envelopes' });
      return { count, perSecond: (count * 1000) / (lastAt - t0), latency: percentiles(latencies) };
    },
    close() {
      for (const s of sockets) s.close();
    },
  };
}

/**
 * `count` events appended to the auth event store, `appenders` at a time, each a new stream as
 * `POST /gofers` makes (one statement, then the outbox publisher's wake-up), round robin over the
 * accounts; done when every resulting `system_notice` is a row of `read.oan_event`.
 */
export async function appendLoad(
  fleet: TestFleet,
  accounts: JoinedAccount[],
  count: number,
  appenders: number,
): Promise<Loaded> {
  const db = new pg.Client({ connectionString: fleet.env.DATABASE_URL! });
  await db.connect();
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  try {
    const rows = async () =>
      Number(
        (await db.query<{ n: string }>(`select count(*) n from read.oan_event where type = 'system_notice'`))
          .rows[0]!.n,
      );
    const target = (await rows()) + count;
    const store = new EventStore('auth');
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: appenders }, async () => {
        for (let i = next++; i < count; i = next++) {
          const acc = accounts[i % accounts.length]!;
          await store.append(orm.em.fork(), [
            {
              streamId: `bench-${randomUUID()}`,
              expectedVersion: 'no_stream',
              events: [benchNotice(acc.userId, `0.0.${i}`)],
            },
          ]);
          store.committed(orm);
        }
      }),
    );
    await waitFor(async () => (await rows()) >= target, {
      timeoutMs: 300_000,
      intervalMs: 20,
      what: 'system_notice rows',
    });
    return { count, perSecond: (count * 1000) / (performance.now() - t0) };
  } finally {
    await orm.close();
    await db.end();
  }
}
