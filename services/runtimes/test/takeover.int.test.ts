import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobWaitingNotice, NotifyOwner } from '../src/infra/ownerNotices.ts';
import { sweepOnce } from '../src/sweep/takeover.ts';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';
import { readModels } from './readModels.ts';

let w: RuntimesWorld;
let rm: ReturnType<typeof readModels>;
beforeAll(async () => {
  w = await startRuntimesWorld();
  rm = readModels(w.orm);
});
afterAll(async () => {
  await w?.close();
});

interface JobItem {
  jobId: string;
  eventId: string;
  seq: string;
  state: string;
  ownerReason?: string;
}
interface Lease {
  jobId: string;
  version: number;
}

/** What auth was asked to record (as the notice route would), and a switch to make it fail. */
class OwnerInbox {
  notices: JobWaitingNotice[] = [];
  failing = false;
  notify: NotifyOwner = async (n) => {
    await new Promise((r) => setTimeout(r, 5)); // an HTTP round trip: lets racing sweeps overlap
    if (this.failing) throw new Error('auth is away');
    this.notices.push(n);
  };
  of = (accountId: string) => this.notices.filter((n) => n.accountId === accountId);
}

/** Sweeps until a pass hands nothing more over (a pass takes a batch; other tests' jobs share the table). */
async function sweepAll(inbox: OwnerInbox) {
  for (let i = 0; i < 20; i++) {
    const r = await sweepOnce(w.ctx, inbox.notify);
    if (r.ran && r.handed === 0) return;
  }
}

async function runtime(c: Caller, policy: Record<string, unknown>) {
  const res = await w.call(c, 'POST', '/runtimes', { name: 'desk', policy });
  expect(res.statusCode).toBe(201);
  return res.json<{ runtimeId: string }>().runtimeId;
}
const jobs = async (c: Caller, id: string) =>
  (await w.call(c, 'GET', `/runtimes/${id}/jobs`)).json<JobItem[]>();
const claim = async (c: Caller, id: string, worker = 'w1') =>
  (await w.call(c, 'POST', `/runtimes/${id}/claim`, { worker })).json<{ job: Lease | null }>().job;
const fail = (c: Caller, id: string, job: Lease, worker = 'w1') =>
  w.call(c, 'POST', `/runtimes/${id}/jobs/${job.jobId}/finish`, {
    leaseOwner: worker,
    version: job.version,
    outcome: 'failed',
  });
const waiting = async (c: Caller) =>
  (await w.call(c, 'GET', '/runtimes/waiting')).json<
    (JobItem & { runtimeId: string; runtimeName: string; event: { eventId: string } })[]
  >();

describe('a job whose attempts are used up', () => {
  it('goes to the owner once: the notice names the runtime, job, event and reason', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 2 });
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    for (const worker of ['w1', 'w2']) {
      const job = (await claim(c, id, worker))!;
      expect((await fail(c, id, job, worker)).statusCode).toBe(200);
    }
    expect(await jobs(c, id)).toMatchObject([{ state: 'exhausted' }]);

    await sweepAll(inbox);
    const [job] = await jobs(c, id);
    expect(job).toMatchObject({ state: 'owner', ownerReason: 'attempts_exhausted' });
    expect(inbox.of(c.accountId)).toEqual([
      {
        accountId: c.accountId,
        runtimeId: id,
        runtimeName: 'desk',
        jobId: job!.jobId,
        eventId: e.eventId,
        eventSeq: e.seq,
        eventType: 'gofer_question',
        goferId: g,
        reason: 'attempts_exhausted',
      },
    ]);
    // never handed out again, listed for the owner, and told once however often the sweep runs
    expect(await claim(c, id, 'w3')).toBeNull();
    const list = await waiting(c);
    expect(list).toMatchObject([
      {
        jobId: job!.jobId,
        runtimeId: id,
        runtimeName: 'desk',
        state: 'owner',
        event: { eventId: e.eventId },
      },
    ]);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toHaveLength(1);
  });

  it('goes to the owner when its last lease runs out, with nobody claiming it again', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 1, leaseSeconds: 10 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await claim(c, id);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toEqual([]); // the lease still runs
    w.clock.advance(11);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toMatchObject([{ reason: 'attempts_exhausted' }]);
    expect(await jobs(c, id)).toMatchObject([{ state: 'owner', leaseOwner: null }]);
  });

  it('is told once when many sweeps race (one replica sweeps at a time)', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 1 });
    for (let i = 0; i < 3; i++) await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    for (let i = 0; i < 3; i++) expect((await fail(c, id, (await claim(c, id))!)).statusCode).toBe(200);
    const passes = await Promise.all(Array.from({ length: 6 }, () => sweepOnce(w.ctx, inbox.notify)));
    expect(passes.some((p) => p.ran)).toBe(true);
    await sweepAll(inbox);
    const told = inbox.of(c.accountId).map((n) => n.jobId);
    expect(told).toHaveLength(3);
    expect(new Set(told).size).toBe(3);
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['owner', 'owner', 'owner']);
  });

  it('stays as it is while auth cannot record the notice, and goes to the owner at a later pass', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 1 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await fail(c, id, (await claim(c, id))!);
    inbox.failing = true;
    await sweepOnce(w.ctx, inbox.notify);
    expect(await jobs(c, id)).toMatchObject([{ state: 'exhausted' }]);
    inbox.failing = false;
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toHaveLength(1);
    expect(await jobs(c, id)).toMatchObject([{ state: 'owner' }]);
  });
});

describe('a runtime without a live worker for its grace', () => {
  it('hands its jobs to the owner, counting from its creation when it never had a worker', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], graceSeconds: 60 });
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    w.clock.advance(50);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toEqual([]);
    w.clock.advance(11);
    // nobody listed or claimed: the sweep reads the envelope itself
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toMatchObject([
      { eventId: e.eventId, reason: 'no_live_worker', runtimeId: id, goferId: 'g1' },
    ]);
    expect(await jobs(c, id)).toMatchObject([{ state: 'owner', ownerReason: 'no_live_worker' }]);
  });

  it('keeps them while a worker claims (even finding nothing) or heartbeats within the grace', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const id = await runtime(c, { types: ['gofer_question'], graceSeconds: 60, leaseSeconds: 3600 });
    w.clock.advance(50);
    expect(await claim(c, id)).toBeNull(); // alive, with nothing to do
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const held = (await claim(c, id))!;
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    w.clock.advance(50);
    const hb = await w.call(c, 'POST', `/runtimes/${id}/jobs/${held.jobId}/heartbeat`, {
      leaseOwner: 'w1',
      version: held.version,
    });
    expect(hb.statusCode).toBe(200);
    w.clock.advance(50);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toEqual([]);
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['leased', 'queued']);
    // then the worker goes silent: the queued job goes to the owner, the held lease runs on
    w.clock.advance(11);
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toMatchObject([{ reason: 'no_live_worker' }]);
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['leased', 'owner']);
  });

  it('refuses a grace outside 30–86400 s', async () => {
    const c = await w.account();
    for (const graceSeconds of [29, 86_401]) {
      const res = await w.call(c, 'POST', '/runtimes', {
        name: 'x',
        policy: { types: ['gofer_question'], graceSeconds },
      });
      expect(res.statusCode).toBe(400);
    }
    const res = await w.call(c, 'POST', '/runtimes', { name: 'x', policy: { types: ['gofer_question'] } });
    expect(res.json().policy.graceSeconds).toBe(300);
  });
});

describe('a job waiting for the owner', () => {
  it('is superseded when the owner answers it by hand, and leaves the waiting list', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 1 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    await fail(c, id, (await claim(c, id))!);
    await sweepAll(inbox);
    expect(await waiting(c)).toHaveLength(1);
    await rm.chatMessage(c.accountId, g, 'user');
    expect(await waiting(c)).toEqual([]);
    expect(await jobs(c, id)).toMatchObject([{ state: 'superseded' }]);
  });

  it('is not told when its decision was settled before the sweep', async () => {
    const inbox = new OwnerInbox();
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, { types: ['gofer_question'], maxAttempts: 1 });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    await fail(c, id, (await claim(c, id))!);
    await rm.chatMessage(c.accountId, g, 'user');
    await sweepAll(inbox);
    expect(inbox.of(c.accountId)).toEqual([]);
    expect(await jobs(c, id)).toMatchObject([{ state: 'superseded' }]);
  });
});
