import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentEndpoint, joinAccount, TestConnector, TestFleet, waitFor, workingAgent } from '@oan/testing';

/**
 * A push in flight when the runtimes process is killed -9 is not lost: its lease is in Postgres, and
 * once it runs out the restarted process pushes the job again, with the next version and attempt.
 */
let fleet: TestFleet;
let agent: AgentEndpoint;
beforeAll(async () => {
  agent = await AgentEndpoint.start();
  fleet = await TestFleet.start({
    env: { RUNTIMES_ALLOW_LOOPBACK: 'true', RUNTIMES_DISPATCH_POLL_MS: '200' },
  });
});
afterAll(async () => {
  await fleet?.stop();
  await agent?.close();
});

describe('when the runtimes process is killed -9 while a job is pushed', () => {
  it('pushes the job again after its lease, and the second answer finishes it', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `endpoint-fault-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    // the first push is held unanswered; every later one is handled
    let pushes = 0;
    agent.behaviour = (r) =>
      r.json.type === 'runtime.verification' || ++pushes > 1 ? workingAgent(r) : 'hang';
    const created = await c.rest<{ runtimeId: string; state: string }>('POST', '/runtimes', {
      name: 'api-agent',
      policy: { types: ['gofer_message'], leaseSeconds: 5 },
      endpoint: agent.url,
    });
    expect(created.body.state).toBe('active');
    const id = created.body.runtimeId;
    expect((await c.rest('POST', '/gofers', { locale: 'en' })).status).toBe(201);
    const first = await waitFor(async () => agent.jobs()[0], { timeoutMs: 20_000, what: 'the first push' });

    await fleet.restart('runtimes'); // kill -9 mid-request, then start again
    const jobs = async () =>
      (await c.rest<{ jobId: string; state: string; attempts: number }[]>('GET', `/runtimes/${id}/jobs`))
        .body;
    await waitFor(async () => ((await jobs())[0]?.state === 'handled' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the job to be pushed again and handled',
    });
    expect(await jobs()).toMatchObject([{ jobId: first.json.jobId, state: 'handled', attempts: 2 }]);
    expect(agent.jobs().map((p) => [p.json.jobId, p.json.attempts, p.json.version])).toEqual([
      [first.json.jobId, 1, 1],
      [first.json.jobId, 2, 2],
    ]);
  });
});
