import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';

/**
 * Supersession and takeover through the edge (docs/runtimes.md, ADR 0032): a decision the owner
 * settles by REST closes its job; a job whose attempts are used up reaches the owner as a
 * `runtime_job_waiting` system_notice in GET /events (recorded by auth, projected with a seq), is
 * listed as waiting, and leaves that list when the owner answers it by hand.
 */
let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start({ env: { RUNTIMES_SWEEP_MS: '200' } });
});
afterAll(async () => {
  await fleet?.stop();
});

let n = 0;
async function connector(): Promise<TestConnector> {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `takeover-${++n}-${fleet.id}@example.com`);
  return new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
}

interface Job {
  jobId: string;
  eventId: string;
  state: string;
  ownerReason?: string;
}
interface Claimed {
  job: { jobId: string; version: number; event: OanEventEnvelope } | null;
}

/** A runtime, then a Gofer whose greeting (a gofer_message with a reply) becomes its job. */
async function greetingJob(c: TestConnector, policy: Record<string, unknown>) {
  const { runtimeId } = (await c.rest<{ runtimeId: string }>('POST', '/runtimes', { name: 'desk', policy }))
    .body;
  const { goferId } = (await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body;
  const claimed = await waitFor(
    async () =>
      (await c.rest<Claimed>('POST', `/runtimes/${runtimeId}/claim`, { worker: 'w1' })).body.job ?? undefined,
    { what: 'the greeting job' },
  );
  expect(claimed.event).toMatchObject({ type: 'gofer_message', goferId });
  return { runtimeId, goferId, job: claimed };
}
const jobs = async (c: TestConnector, runtimeId: string) =>
  (await c.rest<Job[]>('GET', `/runtimes/${runtimeId}/jobs`)).body;

describe('a decision settled by REST', () => {
  it("supersedes its job: the holder's heartbeat is 409 JOB_SUPERSEDED and it is never handed out again", async () => {
    const c = await connector();
    const { runtimeId, goferId, job } = await greetingJob(c, { types: ['gofer_message'] });
    // the owner answers in the Gofer's chat by hand (as the web page does, with the same route)
    const said = await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
      content: 'I am looking for a flat',
    });
    expect(said.status).toBe(202);
    const at = `/runtimes/${runtimeId}/jobs/${job.jobId}/heartbeat`;
    const refused = await waitFor(
      async () => {
        const res = await c.rest('POST', at, { leaseOwner: 'w1', version: job.version });
        return res.status === 409 && res;
      },
      { what: 'the heartbeat refused once the answer is projected' },
    );
    expect(refused.body).toEqual({ error: expect.any(String), code: 'JOB_SUPERSEDED' });
    expect((await jobs(c, runtimeId)).find((j) => j.jobId === job.jobId)?.state).toBe('superseded');
    const next = await c.rest<Claimed>('POST', `/runtimes/${runtimeId}/claim`, { worker: 'w2' });
    expect(next.body.job?.jobId).not.toBe(job.jobId);
  });
});

describe('a job whose attempts are used up', () => {
  it('reaches the owner as a runtime_job_waiting system_notice in GET /events, once', async () => {
    const c = await connector();
    const { runtimeId, goferId, job } = await greetingJob(c, { types: ['gofer_message'], maxAttempts: 1 });
    const failed = await c.rest<{ job: Job }>('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
      leaseOwner: 'w1',
      version: job.version,
      outcome: 'failed',
    });
    expect(failed.body.job.state).toBe('exhausted');

    const notices = async () =>
      (await c.rest<OanEventEnvelope[]>('GET', '/events?since=0&limit=200')).body.filter(
        (e) => e.type === 'system_notice' && (e.payload as { kind?: string }).kind === 'runtime_job_waiting',
      );
    const [notice] = await waitFor(
      async () => {
        const found = await notices();
        return found.length > 0 && found;
      },
      { timeoutMs: 30_000, what: 'the runtime_job_waiting notice' },
    );
    expect(notice!.seq).toMatch(/^\d+$/);
    expect(notice!.source).toBe('platform');
    expect(notice!.payload).toEqual({
      kind: 'runtime_job_waiting',
      runtimeId,
      runtimeName: 'desk',
      jobId: job.jobId,
      eventId: job.event.eventId,
      eventSeq: job.event.seq,
      eventType: 'gofer_message',
      goferId,
      reason: 'attempts_exhausted',
    });
    expect(await jobs(c, runtimeId)).toEqual(
      expect.arrayContaining([expect.objectContaining({ jobId: job.jobId, state: 'owner' })]),
    );
    const waiting = await c.rest<{ jobId: string; event: OanEventEnvelope }[]>('GET', '/runtimes/waiting');
    expect(waiting.body.map((w) => w.jobId)).toEqual([job.jobId]);
    expect(waiting.body[0]!.event).toEqual(job.event);

    // more sweeps tell nothing more; answering by hand takes it off the list
    await new Promise((r) => setTimeout(r, 1000));
    expect(await notices()).toHaveLength(1);
    await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content: 'Done by hand' });
    await waitFor(async () => (await c.rest<unknown[]>('GET', '/runtimes/waiting')).body.length === 0, {
      what: 'the waiting list to empty',
    });
    expect((await jobs(c, runtimeId)).find((j) => j.jobId === job.jobId)?.state).toBe('superseded');
  });
});
