import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet } from '@oan/testing';
import { chat, goferQuestionJob } from './runtimeJobs.ts';

/**
 * Runtimes through the edge (docs/runtimes.md): a connector registers a runtime, its Gofer's
 * greeting becomes a job, a worker claims it and gets the envelope exactly as GET /events has it,
 * gives it back, and claims it again. Nothing of it reaches the account's event stream.
 */
let fleet: TestFleet;
beforeAll(async () => {
  // A held claim looks again on its own only after 30 s here: what wakes it sooner is the push stream.
  fleet = await TestFleet.start({ env: { RUNTIMES_CLAIM_RECHECK_MS: '30000' } });
});
afterAll(async () => {
  await fleet?.stop();
});

let n = 0;
async function connector(): Promise<TestConnector> {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-${++n}-${fleet.id}@example.com`);
  return new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
}

interface Claimed {
  job: {
    jobId: string;
    event: OanEventEnvelope;
    attempts: number;
    leaseOwner: string;
    version: number;
  } | null;
}

const cursor = async (c: TestConnector) => (await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq;

describe('a connector with a runtime', () => {
  it('claims its Gofer greeting as a job, identical to GET /events, releases it and claims it again', async () => {
    const c = await connector();
    const before = await cursor(c);
    const registered = await c.rest<{ runtimeId: string; version: number }>('POST', '/runtimes', {
      name: 'desk',
      policy: { types: ['gofer_question', 'gofer_message'] },
    });
    expect(registered.status).toBe(201);
    const id = registered.body.runtimeId;
    expect(await cursor(c)).toBe(before); // registering tells the stream nothing

    // held before the greeting exists, and woken by its envelope on the push stream
    const started = Date.now();
    const held = c.rest<Claimed>('POST', `/runtimes/${id}/claim`, { worker: 'w1', wait: 25 });
    await new Promise((r) => setTimeout(r, 500));
    const created = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
    expect(created.status).toBe(201);
    const first = await held;
    expect(first.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(15_000);
    const job = first.body.job!;
    expect(job).toMatchObject({ attempts: 1, leaseOwner: 'w1', version: 1 });
    expect(job.event).toMatchObject({ type: 'gofer_message', goferId: created.body.goferId });

    // the same bytes as the item GET /events serves
    const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${before}&limit=200`);
    const item = page.body.find((e) => e.eventId === job.event.eventId)!;
    expect(item).toEqual(job.event);
    const itemText = JSON.stringify(item);
    expect(page.text).toContain(itemText);
    expect(first.text).toContain(`"event":${itemText}`);

    const released = await c.rest<{ job: { state: string } }>(
      'POST',
      `/runtimes/${id}/jobs/${job.jobId}/finish`,
      {
        leaseOwner: 'w1',
        version: 1,
        outcome: 'released',
      },
    );
    expect(released.status).toBe(200);
    expect(released.body.job.state).toBe('queued');
    const again = await c.rest<Claimed>('POST', `/runtimes/${id}/claim`, { worker: 'w2' });
    expect(again.body.job).toMatchObject({ jobId: job.jobId, attempts: 1, leaseOwner: 'w2', version: 2 });
    expect(again.body.job!.event).toEqual(job.event);
    // the first worker is fenced
    const late = await c.rest('POST', `/runtimes/${id}/jobs/${job.jobId}/heartbeat`, {
      leaseOwner: 'w1',
      version: 1,
    });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: expect.any(String), code: 'LEASE_LOST' });

    // what the stream holds is the Gofer's own events only: no runtime, job or lease reaches it
    const after = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${before}&limit=200`);
    for (const e of after.body) {
      expect(e.goferId).toBe(created.body.goferId);
      expect(['gofer_message', 'gofer_question']).toContain(e.type);
    }
  });

  it("answers another account's runtime id byte for byte as an unknown one, through the edge", async () => {
    const [owner, stranger] = await Promise.all([connector(), connector()]);
    const { runtimeId } = (
      await owner.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'mine',
        policy: { types: ['match_request'] },
      })
    ).body;
    const foreign = await stranger.rest('GET', `/runtimes/${runtimeId}`);
    const unknown = await stranger.rest('GET', `/runtimes/${randomUUID()}`);
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(unknown.text);
    const stolen = await stranger.rest('POST', `/runtimes/${runtimeId}/claim`, { worker: 'thief' });
    expect(stolen.status).toBe(404);
    expect(stolen.text).toBe(unknown.text);
    expect((await owner.rest('GET', `/runtimes/${runtimeId}`)).status).toBe(200);
  });
});

describe('a v1 connector that registers no runtime', () => {
  it('sees its events as before, whatever another account does with runtimes', async () => {
    const [v1, other] = await Promise.all([connector(), connector()]);
    const { runtimeId } = (
      await other.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'all',
        policy: {
          types: ['gofer_message', 'gofer_question', 'pair_proposed', 'match_request', 'relay_message'],
        },
      })
    ).body;
    const before = await cursor(v1);
    const created = await v1.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
    const page = await v1.rest<OanEventEnvelope[]>('GET', `/events?since=${before}&limit=200`);
    expect(page.body.length).toBeGreaterThan(0);
    for (const e of page.body) expect(e.goferId).toBe(created.body.goferId);
    // the other account's runtime never sees this account's decisions
    const jobs = await other.rest<unknown[]>('GET', `/runtimes/${runtimeId}/jobs`);
    expect(jobs.body).toEqual([]);
    expect(await v1.rest('GET', '/runtimes')).toMatchObject({ status: 200, body: [] });
  });
});

describe('a worker that finishes a gofer_question with a reply', () => {
  it('has the server answer the Gofer once; the same body again is the same bytes, another is 409', async () => {
    const c = await connector();
    const { runtimeId, goferId, job } = await goferQuestionJob(c, 'w1');
    const finish = `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`;
    const lease = { leaseOwner: 'w1', version: job.version, outcome: 'handled' };

    // a field the chat route does not take is refused here, and nothing is recorded
    const odd = await c.rest('POST', finish, { ...lease, reply: { content: 'yes', mood: 'happy' } });
    expect(odd.status).toBe(400);
    expect(odd.body).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
    // the owning service's own refusal reaches the worker as it gave it; the lease goes on
    const empty = await c.rest<{ code: string }>('POST', finish, { ...lease, reply: {} });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ error: expect.any(String), code: expect.any(String) });
    const held = await c.rest<{ state: string; leaseOwner: string }[]>('GET', `/runtimes/${runtimeId}/jobs`);
    expect(held.body).toMatchObject([{ jobId: job.jobId, state: 'leased', leaseOwner: 'w1' }]);

    const body = { ...lease, reply: { content: 'yes, start' } };
    const done = await c.rest<{ job: { state: string }; reply: { status: number; body: unknown } }>(
      'POST',
      finish,
      body,
    );
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      job: { jobId: job.jobId, state: 'handled', leaseOwner: null },
      reply: { status: 202, body: { accepted: true } },
    });
    const again = await Promise.all([c.rest('POST', finish, body), c.rest('POST', finish, body)]);
    for (const res of again) {
      expect(res.status).toBe(200);
      expect(res.text).toBe(done.text);
    }
    const other = await c.rest('POST', finish, { ...lease, reply: { content: 'no' } });
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: expect.any(String), code: 'FINISH_CONFLICT' });
    const plain = await c.rest('POST', finish, lease);
    expect(plain.status).toBe(409);

    const users = (await chat(c, goferId)).filter((m) => m.role === 'user' && m.content === 'yes, start');
    expect(users).toHaveLength(1);
    expect((await c.rest('POST', `/runtimes/${runtimeId}/claim`, { worker: 'w2' })).body).toEqual({
      job: null,
    });
  });

  it('writes nothing for a fenced worker (409 LEASE_LOST)', async () => {
    const c = await connector();
    const { runtimeId, goferId, job } = await goferQuestionJob(c, 'w1');
    const finish = `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`;
    const released = await c.rest('POST', finish, {
      leaseOwner: 'w1',
      version: job.version,
      outcome: 'released',
    });
    expect(released.status).toBe(200);
    const late = await c.rest('POST', finish, {
      leaseOwner: 'w1',
      version: job.version + 1,
      outcome: 'handled',
      reply: { content: 'too late' },
    });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: expect.any(String), code: 'LEASE_LOST' });
    expect((await chat(c, goferId)).filter((m) => m.content === 'too late')).toEqual([]);
  });
});
