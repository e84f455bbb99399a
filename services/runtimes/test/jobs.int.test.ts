import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

let w: RuntimesWorld;
beforeAll(async () => {
  w = await startRuntimesWorld({ RUNTIMES_CLAIM_RECHECK_MS: '100' });
});
afterAll(async () => {
  await w?.close();
});

interface Lease {
  jobId: string;
  attempts: number;
  leaseOwner: string;
  version: number;
  leaseUntil: string;
  event: { eventId: string; seq: string; type: string };
}

async function runtime(c: Caller, policy: Record<string, unknown> = { types: ['gofer_question'] }) {
  const res = await w.call(c, 'POST', '/runtimes', { name: 'rt', policy });
  return res.json<{ runtimeId: string }>().runtimeId;
}
const claim = (c: Caller, id: string, worker: string, wait?: number) =>
  w.call(c, 'POST', `/runtimes/${id}/claim`, { worker, ...(wait === undefined ? {} : { wait }) });
interface JobItem {
  jobId: string;
  eventId: string;
  type: string;
  state: string;
}
const jobs = async (c: Caller, id: string, state?: string): Promise<JobItem[]> =>
  (await w.call(c, 'GET', `/runtimes/${id}/jobs${state ? `?state=${state}` : ''}`)).json<JobItem[]>();
const rows = (runtimeId: string) =>
  sql(w.orm.em.fork(), 'select * from runtimes.jobs where runtime_id = ? order by seq', [runtimeId]);

describe('a runtime, when the account receives decisions', () => {
  it('makes one job per wanted decision after its registration, in seq order', async () => {
    const c = await w.account();
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' }); // before: not a job
    const id = await runtime(c, { types: ['gofer_question', 'match_request'], goferIds: ['g1'] });
    const a = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g2' }); // another Gofer
    await w.envelope(c.accountId, { type: 'gofer_message', goferId: 'g1' }); // another type
    await w.envelope(c.accountId, { type: 'match_request', goferId: 'g1', reply: false }); // no reply
    const b = await w.envelope(c.accountId, { type: 'match_request', goferId: 'g1' });
    const list = await jobs(c, id);
    expect(list.map((j) => j.eventId)).toEqual([a.eventId, b.eventId]);
    expect(list[0]).toMatchObject({
      seq: a.seq,
      type: 'gofer_question',
      goferId: 'g1',
      state: 'queued',
      attempts: 0,
    });
  });

  it('hands out the envelope byte for byte as it is stored for GET /events', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const res = await claim(c, id, 'w1');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toContain(`"event":${e.text}`);
    const job = res.json().job as Lease;
    expect(job).toMatchObject({ attempts: 1, leaseOwner: 'w1', version: 1 });
    expect(new Date(job.leaseUntil).getTime() - w.clock.now().getTime()).toBeGreaterThan(55_000);
    expect((await claim(c, id, 'w2')).json()).toEqual({ job: null });
  });

  it('makes one job of an envelope read twice (a rebuild from the event table)', async () => {
    const c = await w.account();
    const id = await runtime(c);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const before = await jobs(c, id);
    // the cursor back to the registration: every envelope is read again
    await sql(w.orm.em.fork(), 'update runtimes.runtimes set cursor_seq = 0 where id = ?', [id]);
    expect(await jobs(c, id)).toEqual(before);
    await sql(w.orm.em.fork(), 'delete from runtimes.jobs where runtime_id = ?', [id]);
    await sql(w.orm.em.fork(), 'update runtimes.runtimes set cursor_seq = 0 where id = ?', [id]);
    const rebuilt = await jobs(c, id);
    expect(rebuilt.map((j: { jobId: string }) => j.jobId)).toEqual(
      before.map((j: { jobId: string }) => j.jobId),
    );
  });
});

describe('claims', () => {
  it('hand one job to exactly one of 20 racing workers', async () => {
    const c = await w.account();
    const id = await runtime(c);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(c, id, `w${i}`)));
    expect(answers.every((r) => r.statusCode === 200)).toBe(true);
    const winners = answers.map((r) => r.json().job as Lease | null).filter((j) => j !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]).toMatchObject({ attempts: 1, version: 1 });
    expect(await rows(id)).toMatchObject([
      { state: 'leased', attempts: 1, version: 1, lease_owner: winners[0]!.leaseOwner },
    ]);
  });

  it('hand five jobs to five of 20 racing workers, each once', async () => {
    const c = await w.account();
    const id = await runtime(c);
    for (let i = 0; i < 5; i++) await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(c, id, `w${i}`)));
    const won = answers.map((r) => r.json().job as Lease | null).filter((j) => j !== null);
    expect(new Set(won.map((j) => j.jobId)).size).toBe(5);
    expect(won).toHaveLength(5);
  });

  it('held with wait, get a job stored after they started', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const started = Date.now();
    const held = claim(c, id, 'w1', 10);
    await new Promise((r) => setTimeout(r, 300));
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const res = await held;
    expect(res.json().job.event.eventId).toBe(e.eventId);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('held with wait, hold no database connection: 25 of them leave the pool of 10 free', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const held = Array.from({ length: 25 }, (_, i) => claim(c, id, `w${i}`, 3));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    expect((await w.call(c, 'GET', `/runtimes/${id}`)).statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_000);
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const answers = (await Promise.all(held)).map((r) => r.json<{ job: Lease | null }>().job);
    expect(answers.filter((j) => j !== null).map((j) => j.event.eventId)).toEqual([e.eventId]);
  });

  it('held past the per-account cap are 429 with Retry-After', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const held = Array.from({ length: 32 }, (_, i) => claim(c, id, `w${i}`, 2));
    await new Promise((r) => setTimeout(r, 300));
    const over = await claim(c, id, 'one-too-many', 2);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
    expect(over.json()).toEqual({ error: expect.any(String), code: 'RATE_LIMITED' });
    expect((await Promise.all(held)).every((r) => r.statusCode === 200)).toBe(true);
  });

  it('held with wait, answer null when the time is up', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const started = Date.now();
    expect((await claim(c, id, 'w1', 1)).json()).toEqual({ job: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('refuse a wait over 30 s', async () => {
    const c = await w.account();
    const id = await runtime(c);
    const res = await claim(c, id, 'w1', 31);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
  });
});

describe('a leased job', () => {
  async function leased(policy: Record<string, unknown> = { types: ['gofer_question'], leaseSeconds: 10 }) {
    const c = await w.account();
    const id = await runtime(c, policy);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const job = (await claim(c, id, 'w1')).json().job as Lease;
    const at = (p: string) => `/runtimes/${id}/jobs/${job.jobId}/${p}`;
    return { c, id, job, at };
  }

  it('keeps its lease and progress through a heartbeat of the holder', async () => {
    const { c, job, at } = await leased();
    w.clock.advance(5);
    const res = await w.call(c, 'POST', at('heartbeat'), {
      leaseOwner: 'w1',
      version: 1,
      progress: { percent: 40, note: 'reading' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().job).toMatchObject({ state: 'leased', progress: { percent: 40, note: 'reading' } });
    expect(new Date(res.json<{ job: Lease }>().job.leaseUntil).getTime()).toBeGreaterThan(
      new Date(job.leaseUntil).getTime(),
    );
  });

  it('is claimable again when its lease runs out, and the old holder is fenced', async () => {
    const { c, id, job, at } = await leased();
    w.clock.advance(11);
    const again = (await claim(c, id, 'w2')).json().job as Lease;
    expect(again).toMatchObject({ jobId: job.jobId, attempts: 2, version: 2, leaseOwner: 'w2' });
    const before = await rows(id);
    for (const [path, body] of [
      ['heartbeat', { leaseOwner: 'w1', version: 1, progress: { note: 'still here' } }],
      ['finish', { leaseOwner: 'w1', version: 1, outcome: 'released' }],
      ['finish', { leaseOwner: 'w1', version: 1, outcome: 'handled' }],
    ] as const) {
      const res = await w.call(c, 'POST', at(path), body);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({ error: expect.any(String), code: 'LEASE_LOST' });
    }
    expect(await rows(id)).toEqual(before);
  });

  it('refuses a heartbeat after the lease ran out, even before anyone reclaimed it', async () => {
    const { c, id, at } = await leased();
    w.clock.advance(11);
    const before = await rows(id);
    const res = await w.call(c, 'POST', at('heartbeat'), { leaseOwner: 'w1', version: 1 });
    expect(res.json()).toEqual({ error: expect.any(String), code: 'LEASE_LOST' });
    expect(await rows(id)).toEqual(before);
  });

  it('answers an identical finish again the same, and another body for that lease 409', async () => {
    const { c, id, at } = await leased();
    const body = { leaseOwner: 'w1', version: 1, outcome: 'released' };
    const first = await w.call(c, 'POST', at('finish'), body);
    expect(first.statusCode).toBe(200);
    expect(first.json().job).toMatchObject({ state: 'queued', attempts: 0, leaseOwner: null });
    const retried = await w.call(c, 'POST', at('finish'), body);
    expect(retried.statusCode).toBe(200);
    expect(retried.body).toBe(first.body);
    const other = await w.call(c, 'POST', at('finish'), { ...body, outcome: 'failed' });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: expect.any(String), code: 'FINISH_CONFLICT' });
    // released: claimable again at once, with a new version, the release not counted
    const again = (await claim(c, id, 'w2')).json().job as Lease;
    expect(again).toMatchObject({ attempts: 1, version: 2 });
    // the first lease's retry still answers what it answered
    expect((await w.call(c, 'POST', at('finish'), body)).body).toBe(first.body);
  });

  it('counts failed attempts and is exhausted after maxAttempts, never handed out again', async () => {
    const { c, id, at } = await leased({ types: ['gofer_question'], maxAttempts: 2, leaseSeconds: 10 });
    const f1 = await w.call(c, 'POST', at('finish'), { leaseOwner: 'w1', version: 1, outcome: 'failed' });
    expect(f1.json().job).toMatchObject({ state: 'queued', attempts: 1 });
    const second = (await claim(c, id, 'w2')).json().job as Lease;
    expect(second).toMatchObject({ attempts: 2, version: 2 });
    const f2 = await w.call(c, 'POST', at('finish'), { leaseOwner: 'w2', version: 2, outcome: 'failed' });
    expect(f2.json().job).toMatchObject({ state: 'exhausted', attempts: 2 });
    expect((await claim(c, id, 'w3')).json()).toEqual({ job: null });
    expect(await jobs(c, id, 'exhausted')).toHaveLength(1);
  });

  it('is exhausted when its last lease runs out', async () => {
    const { c, id } = await leased({ types: ['gofer_question'], maxAttempts: 1, leaseSeconds: 10 });
    w.clock.advance(11);
    expect((await claim(c, id, 'w2')).json()).toEqual({ job: null });
    expect(await jobs(c, id)).toMatchObject([{ state: 'exhausted', attempts: 1, leaseOwner: null }]);
  });

  it('closes with handled (no reply), and refuses a reply whose owning service is not configured (501)', async () => {
    const { c, id, at } = await leased();
    const withReply = await w.call(c, 'POST', at('finish'), {
      leaseOwner: 'w1',
      version: 1,
      outcome: 'handled',
      reply: { content: 'Lyon' },
    });
    expect(withReply.statusCode).toBe(501);
    expect(withReply.json()).toEqual({ error: expect.any(String), code: 'OUTCOME_NOT_SUPPORTED' });
    expect(await jobs(c, id)).toMatchObject([{ state: 'leased' }]);
    const done = await w.call(c, 'POST', at('finish'), { leaseOwner: 'w1', version: 1, outcome: 'handled' });
    expect(done.json().job).toMatchObject({ state: 'handled', attempts: 1 });
    expect((await claim(c, id, 'w2')).json()).toEqual({ job: null });
  });

  it('answers an unknown job id 404 and a malformed body 400', async () => {
    const { c, id } = await leased();
    const unknown = await w.call(
      c,
      'POST',
      `/runtimes/${id}/jobs/00000000-0000-4000-8000-000000000000/finish`,
      {
        leaseOwner: 'w1',
        version: 1,
        outcome: 'released',
      },
    );
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: 'Job not found', code: 'NOT_FOUND' });
    const bad = await w.call(c, 'POST', `/runtimes/${id}/jobs/x/finish`, {
      leaseOwner: 'w1',
      outcome: 'done',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('VALIDATION_ERROR');
  });
});
