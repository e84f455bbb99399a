import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { ConcurrencyError, EventStore, handleCommand, handleMultiStreamCommand } from '../src/index.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
const store = new EventStore('es_test');
let orm: MikroORM;

beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'es_test', migrations: [store.migration()] });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const ev = (n: number) => ({
  type: 'Counted',
  data: { n },
  partitionKey: 'acc',
  occurredAt: new Date().toISOString(),
});
const counter = {
  initialState: () => 0,
  evolve: (s: number, e: { type: string; data: unknown }) => (e.type === 'Counted' ? s + 1 : s),
};

describe('appending to a stream', () => {
  it('numbers events from 1 and reads them back in order', async () => {
    await orm.em
      .fork()
      .transactional((em) =>
        store.append(em, [{ streamId: 's1', expectedVersion: 'no_stream', events: [ev(1), ev(2)] }]),
      );
    const read = await store.readStream(orm.em.fork(), 's1');
    expect(read.map((e) => e.streamVersion)).toEqual([1, 2]);
    expect(read.map((e) => (e.data as { n: number }).n)).toEqual([1, 2]);
  });

  it('refuses an append whose expected version is stale', async () => {
    const run = orm.em
      .fork()
      .transactional((em) => store.append(em, [{ streamId: 's1', expectedVersion: 1, events: [ev(3)] }]));
    await expect(run).rejects.toBeInstanceOf(ConcurrencyError);
  });

  it('when two writers race for the same version, exactly one wins', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        orm.em
          .fork()
          .transactional((em) =>
            store.append(em, [{ streamId: 'race', expectedVersion: 'no_stream', events: [ev(i)] }]),
          ),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConcurrencyError);
  });

  it('rolls back every stream of a multi-stream append when one conflicts', async () => {
    const run = orm.em.fork().transactional((em) =>
      store.append(em, [
        { streamId: 'multi-a', expectedVersion: 'no_stream', events: [ev(1)] },
        { streamId: 's1', expectedVersion: 0, events: [ev(1)] },
      ]),
    );
    await expect(run).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.readStream(orm.em.fork(), 'multi-a')).toEqual([]);
  });

  it('handleCommand re-runs on conflicts so 20 concurrent commands all land, densely', async () => {
    await Promise.all(
      Array.from({ length: 20 }, () =>
        handleCommand(orm, store, 'cmd', counter, () => [ev(0)], { retries: 50 }),
      ),
    );
    const read = await store.readStream(orm.em.fork(), 'cmd');
    expect(read.map((e) => e.streamVersion)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('puts every appended event in the outbox', async () => {
    const [{ n }] = (await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*)::text as n from es_test.outbox',
    )) as [{ n: string }];
    const [{ m }] = (await sql<{ m: string }>(
      orm.em.fork(),
      'select count(*)::text as m from es_test.events',
    )) as [{ m: string }];
    expect(n).toBe(m);
  });

  it('refuses an expected version ahead of the stream (no gap in the numbering) and stores nothing', async () => {
    const run = orm.em.fork().transactional((em) =>
      store.append(em, [
        { streamId: 'gap-ok', expectedVersion: 'no_stream', events: [ev(1)] },
        { streamId: 's1', expectedVersion: 7, events: [ev(8)] },
      ]),
    );
    await expect(run).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.readStream(orm.em.fork(), 'gap-ok')).toEqual([]);
    expect((await store.readStream(orm.em.fork(), 's1')).map((e) => e.streamVersion)).toEqual([1, 2]);
  });

  it('appends a new stream without a transaction (handleCommand newStream): once, then conflicts', async () => {
    const first = await handleCommand(orm, store, 'fresh-1', counter, () => [ev(1), ev(2)], {
      newStream: true,
    });
    expect(first.state).toBe(2);
    expect(first.appended.map((e) => e.streamVersion)).toEqual([1, 2]);
    await expect(
      handleCommand(orm, store, 'fresh-1', counter, () => [ev(3)], { newStream: true }),
    ).rejects.toBeInstanceOf(ConcurrencyError);
    const outbox = await sql<{ n: string }>(
      orm.em.fork(),
      `select count(*)::text as n from es_test.outbox o join es_test.events e using (position)
        where e.stream_id = ?`,
      ['fresh-1'],
    );
    expect(outbox[0]!.n).toBe('2');
  });

  it('committed() wakes a LISTENer once per burst of commits, after them', async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const heard: number[] = [];
    listener.on('notification', () => heard.push(Date.now()));
    await listener.query(`listen "${store.notifyChannel}"`);
    try {
      for (let i = 0; i < 20; i++) store.committed(orm);
      await new Promise((r) => setTimeout(r, 300));
      // One wake-up in flight, the other 19 collapsed into one more after it.
      expect(heard.length).toBe(2);
    } finally {
      await listener.end();
    }
  });
});

describe('a group commit of appends outside a transaction (appendCommitted)', () => {
  /** The transactions that wrote these streams' rows: one per statement outside a transaction. */
  const writers = async (streams: readonly string[]) =>
    (
      await sql<{ xmin: string }>(
        orm.em.fork(),
        `select distinct xmin::text as xmin from es_test.events
          where stream_id in (select jsonb_array_elements_text(?::jsonb))`,
        [JSON.stringify(streams)],
      )
    ).map((r) => r.xmin);
  const fresh = (prefix: string, n: number) => Array.from({ length: n }, (_, k) => `${prefix}-${k}`);
  const one = (streamId: string, n: number, expectedVersion: 'no_stream' | number = 'no_stream') => ({
    streamId,
    expectedVersion,
    events: [ev(n), ev(n + 1)],
  });

  it('writes the calls of one turn as one statement, each answered with its own events, in call order', async () => {
    const streams = fresh('grp', 30);
    const answers = await Promise.all(streams.map((id, k) => store.appendCommitted(orm, [one(id, k * 10)])));
    answers.forEach((stored, k) => {
      expect(stored.map((e) => [e.streamId, e.streamVersion, (e.data as { n: number }).n])).toEqual([
        [streams[k], 1, k * 10],
        [streams[k], 2, k * 10 + 1],
      ]);
    });
    const positions = answers.flat().map((e) => BigInt(e.position));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(await writers(streams)).toHaveLength(1);
    const [{ n }] = (await sql<{ n: string }>(
      orm.em.fork(),
      `select count(*)::text as n from es_test.outbox o join es_test.events e using (position)
        where e.stream_id like 'grp-%'`,
    )) as [{ n: string }];
    expect(n).toBe('60');
  });

  it('fails a call whose stream moved alone (nothing of it written) and writes the rest of its group', async () => {
    await store.appendCommitted(orm, [one('grp-moved', 0)]);
    const streams = fresh('grp-b', 10);
    const results = await Promise.allSettled([
      ...streams.map((id) => store.appendCommitted(orm, [one(id, 0)])),
      store.appendCommitted(orm, [one('grp-moved', 5)]),
      // Two streams, one of them moved: all or nothing, as inside a transaction.
      store.appendCommitted(orm, [one('grp-multi', 0), one('grp-moved', 7, 1)]),
    ]);
    expect(results.slice(0, 10).every((r) => r.status === 'fulfilled')).toBe(true);
    for (const r of results.slice(10)) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    }
    expect(await writers(streams)).toHaveLength(1);
    expect((await store.readStream(orm.em.fork(), 'grp-moved')).map((e) => e.streamVersion)).toEqual([1, 2]);
    expect(await store.readStream(orm.em.fork(), 'grp-multi')).toEqual([]);
  });

  it('when two calls of one group race for a new stream, one wins and every other call is written', async () => {
    const streams = fresh('grp-c', 10);
    const results = await Promise.allSettled([
      store.appendCommitted(orm, [one('grp-race', 1)]),
      ...streams.map((id) => store.appendCommitted(orm, [one(id, 0)])),
      store.appendCommitted(orm, [one('grp-race', 2)]),
    ]);
    const race = [results[0], results[11]!];
    expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = race.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ConcurrencyError);
    expect(results.slice(1, 11).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(await store.readStream(orm.em.fork(), 'grp-race')).toHaveLength(2);
    for (const id of streams) expect(await store.readStream(orm.em.fork(), id)).toHaveLength(2);
  });

  it('refuses a call with an invalid event alone, before it joins a group', async () => {
    const checked = new EventStore('es_test', {
      assertValid: (_type, _version, data) => {
        if ((data as { n: number }).n < 0) throw new Error('n must not be negative');
      },
    });
    const results = await Promise.allSettled([
      checked.appendCommitted(orm, [one('grp-d-0', 0)]),
      checked.appendCommitted(orm, [one('grp-d-bad', -5)]),
      checked.appendCommitted(orm, [one('grp-d-1', 0)]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await store.readStream(orm.em.fork(), 'grp-d-bad')).toEqual([]);
    expect(await writers(['grp-d-0', 'grp-d-1'])).toHaveLength(1);
  });

  it('gathers the calls of later turns into later groups, each call answered once', async () => {
    const streams = fresh('grp-e', 200);
    // Ten bursts of 20 calls, each in its own turn of the event loop (phases, not timers, so the
    // same under any load): the first group leaves with at most two bursts, the rest gather after.
    const pending: Promise<unknown[]>[] = [];
    for (let burst = 0; burst < 10; burst++) {
      for (let k = burst * 20; k < burst * 20 + 20; k++)
        pending.push(store.appendCommitted(orm, [one(streams[k]!, k)]));
      await new Promise((r) => setImmediate(r));
    }
    const answers = await Promise.all(pending);
    expect(answers.every((a) => a.length === 2)).toBe(true);
    const statements = await writers(streams);
    expect(statements.length).toBeGreaterThanOrEqual(2);
    expect(statements.length).toBeLessThanOrEqual(10);
  });
});

describe('a command across streams (handleMultiStreamCommand)', () => {
  const voucher = {
    initialState: () => ({ wallet: null as string | null, used: false }),
    evolve: (s: { wallet: string | null; used: boolean }, e: { type: string; data: unknown }) =>
      e.type === 'Issued'
        ? { ...s, wallet: (e.data as { wallet: string }).wallet }
        : e.type === 'Redeemed'
          ? { ...s, used: true }
          : s,
  };
  const event = (type: string, data: object) => ({
    type,
    data,
    partitionKey: 'acc',
    occurredAt: new Date().toISOString(),
  });
  const redeem = (voucherId: string) =>
    handleMultiStreamCommand(orm, store, async (load) => {
      const v = await load(voucherId, voucher);
      if (!v.wallet || v.used) throw new Error('voucher used');
      const credits = await load(v.wallet, counter);
      return {
        appends: [
          { streamId: voucherId, events: [event('Redeemed', {})] },
          { streamId: v.wallet, events: [event('Counted', { n: credits + 1 })] },
        ],
        result: v.wallet,
      };
    });

  it('when ten redeems of one voucher race, one commits on both streams and the rest find it used', async () => {
    await handleCommand(orm, store, 'voucher-1', voucher, () => [event('Issued', { wallet: 'wallet-1' })]);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => redeem('voucher-1')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toContain('voucher used');
    expect((await store.readStream(orm.em.fork(), 'wallet-1')).map((e) => e.type)).toEqual(['Counted']);
    expect((await store.readStream(orm.em.fork(), 'voucher-1')).map((e) => e.type)).toEqual([
      'Issued',
      'Redeemed',
    ]);
  });

  it('refuses to append to a stream it did not load, and stores nothing', async () => {
    await expect(
      handleMultiStreamCommand(orm, store, async () => ({
        appends: [{ streamId: 'unloaded', events: [ev(1)] }],
        result: null,
      })),
    ).rejects.toThrow(/without being loaded/);
    expect(await store.readStream(orm.em.fork(), 'unloaded')).toEqual([]);
  });
});

describe('the schema version an event is stored at', () => {
  it('is the one the event names, else the newest its validator knows, else 1', async () => {
    const seen: string[] = [];
    const versioned = new EventStore('es_test', {
      assertValid: (type, version) => void seen.push(`${type}.v${version}`),
      latestVersion: (type) => (type === 'Counted' ? 3 : 1),
    });
    const stored = await orm.em
      .fork()
      .transactional((em) =>
        versioned.append(em, [
          { streamId: 'versions', expectedVersion: 'no_stream', events: [ev(1), { ...ev(2), version: 1 }] },
        ]),
      );
    expect(stored.map((e) => e.version)).toEqual([3, 1]);
    expect(seen).toEqual(['Counted.v3', 'Counted.v1']);
    const plain = await orm.em
      .fork()
      .transactional((em) =>
        store.append(em, [{ streamId: 'versions', expectedVersion: 2, events: [ev(3)] }]),
      );
    expect(plain.map((e) => e.version)).toEqual([1]);
  });
});
