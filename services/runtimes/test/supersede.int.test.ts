import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
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
  state: string;
}
interface Lease {
  jobId: string;
  version: number;
  leaseOwner: string;
  event: { eventId: string };
}

async function runtime(c: Caller, types: string[]) {
  const res = await w.call(c, 'POST', '/runtimes', { name: 'rt', policy: { types } });
  expect(res.statusCode).toBe(201);
  return res.json<{ runtimeId: string }>().runtimeId;
}
const jobs = async (c: Caller, id: string) =>
  (await w.call(c, 'GET', `/runtimes/${id}/jobs`)).json<JobItem[]>();
const stateOf = (list: JobItem[], eventId: string) => list.find((j) => j.eventId === eventId)?.state;
const claim = async (c: Caller, id: string, worker = 'w1') =>
  (await w.call(c, 'POST', `/runtimes/${id}/claim`, { worker })).json<{ job: Lease | null }>().job;

describe('a later user message in the Gofer role-chat', () => {
  it("supersedes that Gofer's earlier gofer_message and gofer_question jobs, and no others", async () => {
    const c = await w.account();
    const g1 = await rm.gofer(c.accountId);
    const g2 = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_message', 'gofer_question']);
    const q = await w.envelope(c.accountId, { type: 'gofer_question', goferId: g1 });
    const m = await w.envelope(c.accountId, { type: 'gofer_message', goferId: g1 });
    const other = await w.envelope(c.accountId, { type: 'gofer_question', goferId: g2 });
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['queued', 'queued', 'queued']);

    // the Gofer speaking again, and the owner speaking in another Gofer's chat, settle nothing
    await rm.chatMessage(c.accountId, g1, 'assistant');
    await rm.chatMessage(c.accountId, g2, 'user', new Date(Date.now() - 60_000)); // before g2's question
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['queued', 'queued', 'queued']);

    // the owner answers in g1's chat (the web page, another connector or REST: one read model)
    await rm.chatMessage(c.accountId, g1, 'user');
    const list = await jobs(c, id);
    expect(stateOf(list, q.eventId)).toBe('superseded');
    expect(stateOf(list, m.eventId)).toBe('superseded');
    expect(stateOf(list, other.eventId)).toBe('queued');
    expect((await w.call(c, 'GET', `/runtimes/${id}/jobs?state=superseded`)).json<JobItem[]>()).toHaveLength(
      2,
    );

    // never handed out again: the claim gets g2's question, then nothing
    expect((await claim(c, id))?.event.eventId).toBe(other.eventId);
    expect(await claim(c, id, 'w2')).toBeNull();
  });

  it('is found at claim time too, without a listing first', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_question']);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    const later = await w.envelope(c.accountId, {
      type: 'gofer_question',
      goferId: g,
      payload: { createdAt: new Date(Date.now() + 5000).toISOString() },
    });
    await rm.chatMessage(c.accountId, g, 'user', new Date(Date.now() + 2000));
    // the first question was answered; the second was asked after the answer
    expect((await claim(c, id))?.event.eventId).toBe(later.eventId);
    const list = await jobs(c, id);
    expect(list.map((j) => j.state)).toEqual(['superseded', 'leased']);
  });

  it('refuses the holder of a superseded job with 409 JOB_SUPERSEDED on heartbeat and finish', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_question']);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    const job = (await claim(c, id))!;
    const at = (p: string) => `/runtimes/${id}/jobs/${job.jobId}/${p}`;
    const hb = { leaseOwner: 'w1', version: job.version };
    expect((await w.call(c, 'POST', at('heartbeat'), hb)).statusCode).toBe(200);

    await rm.chatMessage(c.accountId, g, 'user');
    const refused = await w.call(c, 'POST', at('heartbeat'), hb);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ error: expect.any(String), code: 'JOB_SUPERSEDED' });
    for (const outcome of ['handled', 'released', 'failed']) {
      const res = await w.call(c, 'POST', at('finish'), { ...hb, outcome });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: expect.any(String), code: 'JOB_SUPERSEDED' });
    }
    expect(await jobs(c, id)).toMatchObject([{ state: 'superseded', leaseOwner: null }]);
    expect(await claim(c, id, 'w2')).toBeNull();
  });

  it('closes a job its holder gives back after the decision was settled; a handled finish stays handled', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_question']);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    const [a, b] = [(await claim(c, id))!, (await claim(c, id, 'w2'))!];
    // the holder of a answers through the reply path (a user message), the holder of b does not wait
    await rm.chatMessage(c.accountId, g, 'user');
    const finish = (j: Lease, leaseOwner: string, outcome: string) =>
      w.call(c, 'POST', `/runtimes/${id}/jobs/${j.jobId}/finish`, {
        leaseOwner,
        version: j.version,
        outcome,
      });
    const handled = await finish(a, 'w1', 'handled');
    expect(handled.statusCode).toBe(200);
    expect(handled.json().job).toMatchObject({ state: 'handled' });
    for (let i = 0; i < 2; i++) {
      const failed = await finish(b, 'w2', 'failed');
      expect(failed.statusCode).toBe(409);
      expect(failed.json()).toEqual({ error: expect.any(String), code: 'JOB_SUPERSEDED' });
    }
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['handled', 'superseded']);
  });

  it('supersedes the jobs of a deleted Gofer', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_question']);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    await rm.deleteGofer(g);
    expect(await jobs(c, id)).toMatchObject([{ state: 'superseded' }]);
  });
});

describe('a decided match request', () => {
  it('supersedes its match_request job, and only that one', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['match_request']);
    const r1 = await rm.matchRequest(c.accountId, g);
    const r2 = await rm.matchRequest(c.accountId, g);
    const e1 = await w.envelope(c.accountId, {
      type: 'match_request',
      goferId: g,
      payload: { requestId: r1 },
    });
    const e2 = await w.envelope(c.accountId, {
      type: 'match_request',
      goferId: g,
      payload: { requestId: r2 },
    });
    await rm.decideMatchRequest(r1, 'accepted');
    // the claim skips the decided one and hands out the pending one
    expect((await claim(c, id))?.event.eventId).toBe(e2.eventId);
    const list = await jobs(c, id);
    expect(stateOf(list, e1.eventId)).toBe('superseded');
    expect(stateOf(list, e2.eventId)).toBe('leased');
  });
});

describe('a pairing', () => {
  it('confirmed by this side, or a thread no longer awaiting confirmation, supersedes pair_proposed', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['pair_proposed']);
    const [t1, t2, t3] = [
      await rm.thread(c.accountId, g),
      await rm.thread(c.accountId, g),
      await rm.thread(c.accountId, g),
    ];
    const [e1, e2, e3] = [
      await w.envelope(c.accountId, { type: 'pair_proposed', goferId: g, top: { threadId: t1 } }),
      await w.envelope(c.accountId, { type: 'pair_proposed', goferId: g, top: { threadId: t2 } }),
      await w.envelope(c.accountId, { type: 'pair_proposed', goferId: g, top: { threadId: t3 } }),
    ];
    await rm.confirmThreadSide(t1, 'a'); // this side confirmed
    await rm.setThreadStatus(t2, 'closed'); // rejected or closed
    await rm.confirmThreadSide(t3, 'b'); // only the other side: still waiting for this one
    const list = await jobs(c, id);
    expect([e1, e2, e3].map((e) => stateOf(list, e.eventId))).toEqual(['superseded', 'superseded', 'queued']);
  });
});

describe('a later own message in the conversation', () => {
  it("supersedes that conversation's earlier relay_message jobs; the counterpart's messages do not", async () => {
    const c = await w.account();
    const id = await runtime(c, ['relay_message']);
    const conv = randomUUID();
    const otherConv = randomUUID();
    const relay = async (conversationId: string) => {
      const messageId = await rm.conversationMessage(conversationId, 'counterpart', c.accountId);
      return w.envelope(c.accountId, {
        type: 'relay_message',
        top: { conversationId },
        payload: { messageId, conversationId },
      });
    };
    const a = await relay(conv);
    const b = await relay(conv);
    const other = await relay(otherConv);
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['queued', 'queued', 'queued']);
    await rm.conversationMessage(conv, 'counterpart', c.accountId);
    expect((await jobs(c, id)).map((j) => j.state)).toEqual(['queued', 'queued', 'queued']);
    await rm.conversationMessage(conv, c.accountId, 'counterpart');
    const list = await jobs(c, id);
    expect([a, b, other].map((e) => stateOf(list, e.eventId))).toEqual([
      'superseded',
      'superseded',
      'queued',
    ]);
  });
});

describe('the sweep', () => {
  it('supersedes settled jobs that nobody lists or claims', async () => {
    const c = await w.account();
    const g = await rm.gofer(c.accountId);
    const id = await runtime(c, ['gofer_question']);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: g });
    await jobs(c, id);
    await rm.chatMessage(c.accountId, g, 'user');
    const result = await sweepOnce(w.ctx, async () => {});
    expect(result.ran).toBe(true);
    expect(result.superseded).toBeGreaterThanOrEqual(1);
    const [row] = await sql<{ state: string }>(
      w.orm.em.fork(),
      'select state from runtimes.jobs where runtime_id = ?',
      [id],
    );
    expect(row?.state).toBe('superseded');
  });
});
