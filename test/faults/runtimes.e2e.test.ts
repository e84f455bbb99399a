import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { chat, goferQuestionJob } from '../runtimeJobs.ts';

/**
 * Leases live in Postgres, not in the runtimes process: a kill -9 of it neither loses a job nor
 * frees a lease early, and a worker that died mid-lease loses the job to the next claim once its
 * lease runs out.
 */
let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  await fleet?.stop();
});

interface Job {
  jobId: string;
  attempts: number;
  leaseOwner: string;
  version: number;
  event: { eventId: string };
}

describe('when the runtimes process is killed -9 while a job is leased', () => {
  it('keeps the lease for its holder, then hands the job on after it runs out, fencing the holder', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-fault-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const id = (
      await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'desk',
        policy: { types: ['gofer_message'], leaseSeconds: 5 },
      })
    ).body.runtimeId;
    expect((await c.rest('POST', '/gofers', { locale: 'en' })).status).toBe(201);
    const first = (await c.rest<{ job: Job }>('POST', `/runtimes/${id}/claim`, { worker: 'w1', wait: 20 }))
      .body.job;
    expect(first).toMatchObject({ attempts: 1, version: 1 });

    await fleet.restart('runtimes'); // kill -9, then start again
    const beat = await c.rest('POST', `/runtimes/${id}/jobs/${first.jobId}/heartbeat`, {
      leaseOwner: 'w1',
      version: 1,
      progress: { note: 'survived' },
    });
    expect(beat.status).toBe(200);
    // held by w1: another worker gets nothing while the lease runs
    expect((await c.rest('POST', `/runtimes/${id}/claim`, { worker: 'w2' })).body).toEqual({ job: null });

    // w1 dies now: after its lease, the same job goes to w2 with the next version and attempt
    const second = await waitFor(
      async () =>
        (await c.rest<{ job: Job | null }>('POST', `/runtimes/${id}/claim`, { worker: 'w2', wait: 2 })).body
          .job ?? undefined,
      { timeoutMs: 20_000, what: 'the job to be claimable again' },
    );
    expect(second).toMatchObject({ jobId: first.jobId, attempts: 2, version: 2, leaseOwner: 'w2' });
    expect(second.event).toEqual(first.event);
    const late = await c.rest('POST', `/runtimes/${id}/jobs/${first.jobId}/finish`, {
      leaseOwner: 'w1',
      version: 1,
      outcome: 'handled',
    });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ error: expect.any(String), code: 'LEASE_LOST' });
    const jobs = await c.rest<{ jobId: string; state: string; leaseOwner: string }[]>(
      'GET',
      `/runtimes/${id}/jobs`,
    );
    expect(jobs.body.filter((j) => j.jobId === first.jobId)).toMatchObject([
      { state: 'leased', leaseOwner: 'w2' },
    ]);
  });
});

describe('when the runtimes process is killed -9 between the reply and its record', () => {
  it('completes the reply once after the restart: one user message, the job handled, retries alike', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-reply-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const { runtimeId, goferId, job } = await goferQuestionJob(c, 'w1');
    const finish = `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`;
    const body = {
      leaseOwner: 'w1',
      version: job.version,
      outcome: 'handled',
      reply: { content: 'go ahead' },
    };
    const answered = async () =>
      (await chat(c, goferId)).filter((m) => m.role === 'user' && m.content === 'go ahead');

    // the process SIGKILLs itself once gofers carried the reply out, before it records that
    await fleet.restart('runtimes', { RUNTIMES_FAULT: 'exit-after-reply' });
    const cut = await c.rest('POST', finish, body);
    expect(cut.status).toBe(503);
    await waitFor(async () => (await answered()).length === 1, { what: 'the reply in the chat' });

    // started again without the fault: the sweep completes the pending reply on its own
    await fleet.restart('runtimes');
    await waitFor(
      async () => {
        const jobs = await c.rest<{ jobId: string; state: string }[]>('GET', `/runtimes/${runtimeId}/jobs`);
        return jobs.body.find((j) => j.jobId === job.jobId)?.state === 'handled';
      },
      { timeoutMs: 20_000, what: 'the sweep to complete the reply' },
    );
    const retried = await c.rest<{ job: { state: string }; reply: { status: number } }>('POST', finish, body);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ job: { state: 'handled' }, reply: { status: 202 } });
    expect((await c.rest('POST', finish, body)).text).toBe(retried.text);
    expect(await answered()).toHaveLength(1);
    expect((await c.rest('POST', `/runtimes/${runtimeId}/claim`, { worker: 'w2' })).body).toEqual({
      job: null,
    });
  });

  it('completes it once when the same finish is sent again at once, racing the start-up sweep', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-retry-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const { runtimeId, goferId, job } = await goferQuestionJob(c, 'w1');
    const finish = `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`;
    const body = { leaseOwner: 'w1', version: job.version, outcome: 'handled', reply: { content: 'sure' } };

    await fleet.restart('runtimes', { RUNTIMES_FAULT: 'exit-after-reply' });
    expect((await c.rest('POST', finish, body)).status).toBe(503);
    // the retry and the sweep at start may both send the reply: its command id makes one message
    await fleet.restart('runtimes');
    const retried = await c.rest<{ job: { state: string }; reply: { status: number; body: unknown } }>(
      'POST',
      finish,
      body,
    );
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      job: { state: 'handled' },
      reply: { status: 202, body: { accepted: true } },
    });
    const users = (await chat(c, goferId)).filter((m) => m.role === 'user' && m.content === 'sure');
    expect(users).toHaveLength(1);
  });
});
