import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushTail, type PushEntry } from '../src/index.ts';

/**
 * The push stream's tail against a real Redis: every entry once and in order, whether it reads at
 * once or gathers; a gathering tail reads about once per `gatherMs` under a trickle, and an entry
 * that comes while it waits in its blocked read is taken at once.
 */
const key = `t${randomBytes(4).toString('hex')}:push`;
const log = { warn: () => undefined };
let writer: Redis;

beforeAll(() => {
  writer = new Redis('redis://127.0.0.1:6379/0');
});
afterAll(async () => {
  await writer.del(key);
  writer.disconnect();
});

const add = (seq: number) => writer.xadd(key, '*', 't', 'env', 'a', 'acc-1', 's', String(seq), 'e', '{}');

/** A tail on its own connection, with its XREAD calls counted and its entries with their arrival. */
async function tail(gatherMs: number) {
  const redis = new Redis('redis://127.0.0.1:6379/0');
  let reads = 0;
  const xread = redis.xread.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  (redis as unknown as { xread: (...args: unknown[]) => Promise<unknown> }).xread = (...args) => {
    reads++;
    return xread(...args);
  };
  const got: { seq: bigint; at: number }[] = [];
  const t = new PushTail(
    redis,
    key,
    (e: PushEntry) => {
      if (e.t === 'env') got.push({ seq: e.s, at: performance.now() });
    },
    log,
    { blockMs: 1000, gatherMs },
  );
  await t.start();
  return { t, got, reads: () => reads };
}

async function trickle(from: number, count: number, everyMs: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await add(from + i);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const until = async (done: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('the push tail', () => {
  it('reads about once per gathering window under a trickle, every entry once and in order', async () => {
    const gathering = await tail(100);
    const eager = await tail(0);
    try {
      const t0 = performance.now();
      await trickle(1, 40, 10);
      await until(() => gathering.got.length === 40 && eager.got.length === 40);
      const elapsed = performance.now() - t0;
      for (const { got } of [gathering, eager])
        expect(got.map((g) => g.seq)).toEqual([...Array(40).keys()].map((i) => BigInt(i + 1)));
      // The reads that brought entries, plus the first blocked read and one in flight at the end.
      expect(gathering.reads()).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 3);
      // Reading at once, a trickle 10 ms apart takes a read for nearly every entry.
      expect(eager.reads()).toBeGreaterThan(30);
    } finally {
      await gathering.t.stop();
      await eager.t.stop();
    }
  });

  it('takes an entry that comes while it is blocked at once, and stops while it waits', async () => {
    const gathering = await tail(2000);
    try {
      // Blocked in its first read: the entry comes back with it.
      await new Promise((r) => setTimeout(r, 50));
      const sent = performance.now();
      await add(100);
      await until(() => gathering.got.length === 1);
      expect(gathering.got[0]!.at - sent).toBeLessThan(500);
      // Now waiting out its 2 s window: a stop does not wait for it.
      const stopping = performance.now();
      await gathering.t.stop();
      expect(performance.now() - stopping).toBeLessThan(1500);
    } finally {
      await gathering.t.stop();
    }
  });
});
