import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { observeStatements } from '@oan/db';
import { subscribeWhenReady } from '@oan/http';
import { parseRuntimeWake, runtimeWakesChannel, type RuntimeJobsWake } from '@oan/projection';
import { buildApp, createRuntimesContext } from '../src/app.ts';
import { JobWakes } from '../src/commands/wakes.ts';
import { loadRuntimesConfig } from '../src/config.ts';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

/** Wake-ups the runtimes processes publish (docs/runtimes.md, ADR 0034), read off the Redis channel. */
let w: RuntimesWorld;
let sub: Redis;
const heard: { accountId: string; wake: RuntimeJobsWake }[] = [];
const silent = { warn: () => {} };
let replicaA: JobWakes;
let replicaB: JobWakes;

beforeAll(async () => {
  w = await startRuntimesWorld({
    RUNTIMES_CLAIM_RECHECK_MS: '100',
    RUNTIMES_WAKE_SWEEP_MS: '100',
    RUNTIMES_MAX_HELD_CLAIMS: '3',
  });
  const prefix = w.world.baseEnv.REDIS_PREFIX!;
  sub = w.world.redis.duplicate();
  sub.on('message', (_c: string, m: string) => {
    const parsed = parseRuntimeWake(m);
    if (parsed) heard.push(parsed);
  });
  await subscribeWhenReady(sub, runtimeWakesChannel(prefix));
  // two runtimes replicas tailing the same push stream
  replicaA = new JobWakes(w.ctx, w.world.redis, prefix, silent);
  replicaB = new JobWakes(
    createRuntimesContext({ orm: w.orm, now: w.clock.now }),
    w.world.redis,
    prefix,
    silent,
  );
});
afterAll(async () => {
  sub?.disconnect();
  await w?.close();
});

async function runtime(c: Caller, policy: Record<string, unknown>, name = 'desk') {
  const res = await w.call(c, 'POST', '/runtimes', { name, policy });
  return res.json<{ runtimeId: string }>().runtimeId;
}
const heardBy = (accountId: string) => heard.filter((h) => h.accountId === accountId).map((h) => h.wake);
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 25));
  }
}
/** What the push tail of each replica does with the stored envelope. */
async function pushed(accountId: string, e: { seq: string; text: string }) {
  await Promise.all([replicaA, replicaB].map((r) => r.onEnvelope(accountId, BigInt(e.seq), e.text)));
}

describe('when an envelope a runtime wants is stored', () => {
  it('publishes one wake for that runtime with its claimable count, whatever the number of replicas', async () => {
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], goferIds: ['g1'] });
    const other = await runtime(c, { types: ['match_request'] }, 'matches');
    await pushed(c.accountId, await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' }));
    await until(() => heardBy(c.accountId).length === 1);
    await pushed(c.accountId, await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' }));
    await until(() => heardBy(c.accountId).length === 2);
    expect(heardBy(c.accountId)).toEqual([
      { runtimeId: id, name: 'desk', queued: 1 },
      { runtimeId: id, name: 'desk', queued: 2 },
    ]);
    // no wake for what no runtime wants: another Gofer, no reply, a type of no runtime
    await pushed(c.accountId, await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g2' }));
    await pushed(
      c.accountId,
      await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1', reply: false }),
    );
    await pushed(c.accountId, await w.envelope(c.accountId, { type: 'pair_proposed', goferId: 'g1' }));
    await new Promise((r) => setTimeout(r, 200));
    expect(heardBy(c.accountId)).toHaveLength(2);
    expect(heardBy(c.accountId).some((x) => x.runtimeId === other)).toBe(false);
  });

  it('reads the runtimes of envelopes that arrive together in one statement, each account its own', async () => {
    const [a, b, none] = await Promise.all([w.account(), w.account(), w.account()]);
    const ra = await runtime(a, { types: ['gofer_question'] });
    const rb = await runtime(b, { types: ['gofer_question'] }, 'bdesk');
    const stored = await Promise.all(
      [a, b, none, a].map(async (c) => ({
        c,
        e: await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' }),
      })),
    );
    const reads: string[] = [];
    const stop = observeStatements((s) => {
      if (s.sql.includes('from runtimes.runtimes where account_id')) reads.push(s.sql);
    });
    try {
      // as one XREAD reply hands them to the push tail: in one tick, on one replica
      await Promise.all(stored.map(({ c, e }) => replicaA.onEnvelope(c.accountId, BigInt(e.seq), e.text)));
    } finally {
      stop();
    }
    expect(reads).toHaveLength(1);
    await until(() => heardBy(a.accountId).length === 2 && heardBy(b.accountId).length === 1);
    expect(heardBy(a.accountId).map((x) => x.runtimeId)).toEqual([ra, ra]);
    expect(heardBy(b.accountId)).toEqual([{ runtimeId: rb, name: 'bdesk', queued: 1 }]);
    expect(heardBy(none.accountId)).toEqual([]);
  });

  it("never wakes another account's sockets", async () => {
    const [owner, stranger] = await Promise.all([w.account(), w.account()]);
    await runtime(owner, { types: ['gofer_question'] });
    await runtime(stranger, { types: ['gofer_question'] });
    await pushed(
      owner.accountId,
      await w.envelope(owner.accountId, { type: 'gofer_question', goferId: 'g1' }),
    );
    await until(() => heardBy(owner.accountId).length === 1);
    expect(heardBy(stranger.accountId)).toEqual([]);
  });
});

describe('when a leased job is given back or its lease runs out', () => {
  it('publishes a wake for a release and a failed attempt, none for handled', async () => {
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 5 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const finish = async (outcome: string) => {
      const job = (await w.call(c, 'POST', `/runtimes/${id}/claim`, { worker: 'w1' })).json().job;
      const res = await w.call(c, 'POST', `/runtimes/${id}/jobs/${job.jobId}/finish`, {
        leaseOwner: 'w1',
        version: job.version,
        outcome,
      });
      expect(res.statusCode).toBe(200);
    };
    await finish('released');
    await until(() => heardBy(c.accountId).length === 1);
    await finish('failed');
    await until(() => heardBy(c.accountId).length === 2);
    await finish('handled');
    await new Promise((r) => setTimeout(r, 300));
    expect(heardBy(c.accountId)).toEqual([
      { runtimeId: id, name: 'desk', queued: 1 },
      { runtimeId: id, name: 'desk', queued: 1 },
    ]);
  });

  it('publishes one wake when a lease runs out, found by the sweep', async () => {
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], leaseSeconds: 5 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    expect((await w.call(c, 'POST', `/runtimes/${id}/claim`, { worker: 'w1' })).json().job).not.toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    expect(heardBy(c.accountId)).toEqual([]);
    w.clock.advance(6);
    await until(() => heardBy(c.accountId).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(heardBy(c.accountId)).toEqual([{ runtimeId: id, name: 'desk', queued: 1 }]);
  });
});

describe('claims held with wait in two runtimes processes', () => {
  it('share the per-account cap over both, and a place frees when a hold ends', async () => {
    const config = loadRuntimesConfig(w.world.baseEnv);
    const second = w.world.adopt(
      await buildApp({
        config,
        orm: w.orm,
        redis: w.world.redis,
        ctx: createRuntimesContext({ orm: w.orm }),
        metrics: false,
      }),
    );
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'] });
    const claim = (app: typeof second, worker: string, wait: number) =>
      app.inject({
        method: 'POST',
        url: `/api/v1/runtimes/${id}/claim`,
        headers: c.headers,
        payload: { worker, wait },
      });
    const held = [claim(w.app, 'a1', 1), claim(w.app, 'a2', 3), claim(second, 'b1', 3)];
    await new Promise((r) => setTimeout(r, 300));
    for (const app of [w.app, second]) {
      const over = await claim(app, 'over', 3);
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toBe('1');
    }
    expect((await held[0]!).statusCode).toBe(200); // a1's second is up: its place is given back
    expect((await claim(second, 'b2', 1)).statusCode).toBe(200);
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual([200, 200, 200]);
  });
});
