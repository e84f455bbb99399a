import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentEndpoint, workingAgent, type AgentRequest } from '@oan/testing';
import { catchUp, claimFor } from '../src/commands/jobs.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { ENDPOINT_WORKER } from '../src/dispatch/push.ts';
import { ownRuntime } from '../src/infra/runtimeStore.ts';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

/**
 * Runtimes with an endpoint (docs/runtimes.md, ADR 0033): a real HTTP agent on loopback (the QA
 * switch), verified by a signed challenge, pushed each job and finishing it by its answer.
 */
let w: RuntimesWorld;
let agent: AgentEndpoint;
const dispatchers: Dispatcher[] = [];
beforeAll(async () => {
  w = await startRuntimesWorld({
    RUNTIMES_ALLOW_LOOPBACK: 'true',
    RUNTIMES_DISPATCH_TIMEOUT_MS: '500',
    RUNTIMES_DISPATCH_RETRY_BASE_MS: '200',
    RUNTIMES_DISPATCH_RETRY_MAX_MS: '400',
    RUNTIMES_UNHEALTHY_AFTER: '2',
    RUNTIMES_DISABLE_AFTER: '3',
  });
  agent = await AgentEndpoint.start();
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  agent.behaviour = workingAgent;
});
afterAll(async () => {
  await agent?.close();
  await w?.close();
});

/** A runtimes process's dispatcher (one more per call: replicas). */
function dispatcher(): Dispatcher {
  const d = new Dispatcher({
    ctx: w.ctx,
    endpoints: w.endpoints,
    concurrency: 8,
    pollMs: 30,
    log: w.app.log,
  });
  dispatchers.push(d);
  d.start();
  return d;
}

interface RuntimeView {
  runtimeId: string;
  state: string;
  endpoint?: string;
  secret?: string;
  health?: {
    lastSeenAt: string | null;
    verifiedAt: string | null;
    consecutiveFailures: number;
    recentFailures: { kind: string; jobId: string | null; statusCode: number | null; error: string }[];
  };
}
interface JobItem {
  jobId: string;
  state: string;
  attempts: number;
  version: number;
  leaseOwner: string | null;
}

let names = 0;
async function create(c: Caller, policy: Record<string, unknown> = {}, endpoint = agent.url) {
  const res = await w.call(c, 'POST', '/runtimes', {
    name: `agent-${++names}`,
    policy: { types: ['gofer_question'], ...policy },
    endpoint,
  });
  return { status: res.statusCode, body: res.json<RuntimeView & { code?: string; error?: string }>() };
}
const read = async (c: Caller, id: string) => (await w.call(c, 'GET', `/runtimes/${id}`)).json<RuntimeView>();
const jobsOf = async (c: Caller, id: string) =>
  (await w.call(c, 'GET', `/runtimes/${id}/jobs`)).json<JobItem[]>();
const verify = (c: Caller, id: string) => w.call(c, 'POST', `/runtimes/${id}/verify`);
const pushedTo = (jobId: string) => agent.jobs().filter((r) => r.json.jobId === jobId);

const answers = (...list: ReturnType<typeof workingAgent>[]) => {
  const queue = [...list];
  return (r: AgentRequest) =>
    r.json.type === 'runtime.verification' ? workingAgent(r) : (queue.shift() ?? workingAgent(r));
};

describe('a runtime created with an endpoint that echoes the challenge', () => {
  it('is active at once, answers its secret once, and the challenge is signed with it', async () => {
    const c = await w.account();
    const before = agent.requests.length;
    const { status, body } = await create(c);
    expect(status).toBe(201);
    expect(body).toMatchObject({ state: 'active', endpoint: agent.url });
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const challenge = agent.requests.slice(before).find((r) => r.json.type === 'runtime.verification')!;
    expect(challenge.json).toMatchObject({ type: 'runtime.verification', runtimeId: body.runtimeId });
    expect(challenge.json.challenge).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const headers = challenge.headers as Record<string, string>;
    expect(new Webhook(body.secret!).verify(challenge.body, headers)).toEqual(challenge.json);
    expect(headers['webhook-id']).toMatch(/^verify_/);

    const shown = await read(c, body.runtimeId);
    expect(shown).not.toHaveProperty('secret');
    expect(JSON.stringify(shown)).not.toContain(body.secret!.slice(6));
    expect(shown.health).toMatchObject({ consecutiveFailures: 0, recentFailures: [] });
    expect(shown.health!.verifiedAt).not.toBeNull();

    // the same settings again answer the runtime without its secret; another endpoint is a conflict
    const again = await w.call(c, 'POST', '/runtimes', {
      name: `agent-${names}`,
      policy: { types: ['gofer_question'] },
      endpoint: agent.url,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).not.toHaveProperty('secret');
    const other = await w.call(c, 'POST', '/runtimes', {
      name: `agent-${names}`,
      policy: { types: ['gofer_question'] },
      endpoint: `${agent.url}/other`,
    });
    expect(other.json()).toMatchObject({ code: 'RUNTIME_EXISTS' });
  });

  it('refuses REST claims, and verify on a runtime without an endpoint is a conflict', async () => {
    const c = await w.account();
    const { body } = await create(c);
    const claim = await w.call(c, 'POST', `/runtimes/${body.runtimeId}/claim`, { worker: 'w1' });
    expect(claim.statusCode).toBe(409);
    expect(claim.json()).toEqual({ error: expect.any(String), code: 'RUNTIME_HAS_ENDPOINT' });
    const plain = await w.call(c, 'POST', '/runtimes', {
      name: 'plain',
      policy: { types: ['gofer_question'] },
    });
    const res = await verify(c, plain.json<RuntimeView>().runtimeId);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: expect.any(String), code: 'RUNTIME_WITHOUT_ENDPOINT' });
    // another account's runtime is the same 404 as an unknown one
    const stranger = await w.account();
    const foreign = await verify(stranger, body.runtimeId);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'Runtime not found', code: 'NOT_FOUND' });
  });

  it.each([
    ['a private address', 'https://10.0.0.1/agent'],
    ['the metadata address', 'http://169.254.169.254/latest'],
    ['another scheme', 'ftp://127.0.0.1/agent'],
    ['not a URL', 'agent'],
  ])('refuses %s as an endpoint, even with the QA switch', async (_name, url) => {
    const c = await w.account();
    const { status, body } = await create(c, {}, url);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect((await w.call(c, 'GET', '/runtimes')).json()).toEqual([]);
  });
});

describe('a runtime whose endpoint does not answer the challenge', () => {
  it.each([
    [
      'echoes another value',
      { status: 200, body: { challenge: 'nope' } },
      'the answer does not echo the challenge',
      200,
    ],
    ['answers 500', { status: 500, body: { challenge: 'x' } }, 'HTTP 500', 500],
    ['does not answer in time', 'hang' as const, 'no answer within 500 ms', null],
  ])('stays unverified when it %s, until verify succeeds', async (_name, answer, error, statusCode) => {
    const c = await w.account();
    agent.behaviour = () => answer;
    const { status, body } = await create(c);
    expect(status).toBe(201);
    expect(body.state).toBe('unverified');
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.health!.recentFailures).toEqual([
      { at: expect.any(String), kind: 'verification', jobId: null, statusCode, error },
    ]);

    const refused = await verify(c, body.runtimeId);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({ error: expect.stringContaining(error), code: 'VERIFICATION_FAILED' });
    expect((await read(c, body.runtimeId)).state).toBe('unverified');

    agent.behaviour = workingAgent;
    const ok = await verify(c, body.runtimeId);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ state: 'active', health: { consecutiveFailures: 0 } });
  });

  it('pushes nothing until it is verified, then its waiting jobs', async () => {
    const c = await w.account();
    agent.behaviour = () => ({ status: 404 });
    const { body } = await create(c);
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    dispatcher();
    await new Promise((r) => setTimeout(r, 300)); // ten polls: nothing may be pushed meanwhile
    expect(agent.jobs().filter((r) => (r.json.event as { eventId: string }).eventId === e.eventId)).toEqual(
      [],
    );
    agent.behaviour = workingAgent;
    expect((await verify(c, body.runtimeId)).statusCode).toBe(200);
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 5000 })
      .toBe('handled');
  });
});

describe('a verified runtime, when a decision arrives', () => {
  it('pushes the job, signed, shaped as a claim answers it, and finishes it by the 2xx answer', async () => {
    const c = await w.account();
    const { body } = await create(c);
    dispatcher();
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 5000 })
      .toBe('handled');
    const [job] = await jobsOf(c, body.runtimeId);
    expect(job).toMatchObject({ attempts: 1, version: 1, leaseOwner: null });
    const [pushed, ...more] = pushedTo(job!.jobId);
    expect(more).toEqual([]);
    expect(Object.keys(pushed!.json)).toEqual([
      'event',
      'jobId',
      'attempts',
      'leaseOwner',
      'version',
      'leaseUntil',
    ]);
    expect(pushed!.json).toMatchObject({
      jobId: job!.jobId,
      attempts: 1,
      leaseOwner: ENDPOINT_WORKER,
      version: 1,
    });
    expect(pushed!.body).toContain(`{"event":${e.text},`); // the envelope as GET /events serves it
    const headers = pushed!.headers as Record<string, string>;
    expect(new Webhook(body.secret!).verify(pushed!.body, headers)).toEqual(pushed!.json);
    expect(headers['webhook-id']).toBe(`${job!.jobId}_1`);
    const health = (await read(c, body.runtimeId)).health!;
    expect(health.lastSeenAt).not.toBeNull();
    expect(health.consecutiveFailures).toBe(0);
  });

  it('pushes again with backoff after a failure, and the job is exhausted after maxAttempts', async () => {
    const c = await w.account();
    const { body } = await create(c, { maxAttempts: 2 });
    agent.behaviour = (r) => (r.json.type === 'runtime.verification' ? workingAgent(r) : { status: 503 });
    dispatcher();
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 5000 })
      .toBe('exhausted');
    const [job] = await jobsOf(c, body.runtimeId);
    expect(job).toMatchObject({ attempts: 2, version: 2 });
    const pushes = pushedTo(job!.jobId);
    expect(pushes.map((p) => [p.json.attempts, p.json.version])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(pushes[1]!.at - pushes[0]!.at).toBeGreaterThanOrEqual(90); // half the base, at least
    // The health is written after the job is given back (push.ts), so it may trail the job's state.
    await expect
      .poll(async () =>
        (await read(c, body.runtimeId)).health!.recentFailures.map((f) => [
          f.kind,
          f.jobId,
          f.statusCode,
          f.error,
        ]),
      )
      .toEqual([
        ['dispatch', job!.jobId, 503, 'HTTP 503'],
        ['dispatch', job!.jobId, 503, 'HTTP 503'],
      ]);
  });

  it('counts a timeout, a 2xx that is no finish body and a reply it cannot carry out as failed attempts', async () => {
    const c = await w.account();
    const { body } = await create(c, { maxAttempts: 5, leaseSeconds: 5 });
    agent.behaviour = answers(
      'hang',
      { status: 200, body: { ok: true } },
      { status: 200, body: { outcome: 'handled', reply: { content: 'Paris' } } },
      { status: 200, body: { outcome: 'released' } },
    );
    dispatcher();
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 10_000 })
      .toBe('handled');
    const [job] = await jobsOf(c, body.runtimeId);
    // three failed attempts and a release (not counted) before the handled one
    expect(job).toMatchObject({ attempts: 4, version: 5 });
    const errors = (await read(c, body.runtimeId)).health!.recentFailures.map((f) => f.error).reverse();
    expect(errors).toEqual([
      'no answer within 500 ms',
      'the answer is not a finish body',
      expect.stringMatching(/^OUTCOME_NOT_SUPPORTED: /),
    ]);
  });
});

describe('an endpoint that keeps failing', () => {
  it('turns unhealthy, then disabled (nothing pushed), and comes back when verified again', async () => {
    const c = await w.account();
    const { body } = await create(c, { maxAttempts: 20 });
    const failing = (r: AgentRequest) =>
      r.json.type === 'runtime.verification' ? workingAgent(r) : { status: 500 };
    agent.behaviour = failing;
    const states: string[] = [];
    dispatcher();
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await expect
      .poll(
        async () => {
          const r = await read(c, body.runtimeId);
          if (states.at(-1) !== r.state) states.push(r.state);
          return r.state;
        },
        { timeout: 5000, interval: 20 },
      )
      .toBe('disabled');
    expect(states).toContain('unhealthy');
    const [job] = await jobsOf(c, body.runtimeId);
    expect(job).toMatchObject({ state: 'queued', attempts: 3 });
    await new Promise((r) => setTimeout(r, 600)); // past the backoff: a disabled endpoint is not pushed to
    expect(pushedTo(job!.jobId)).toHaveLength(3);
    expect((await read(c, body.runtimeId)).health!.consecutiveFailures).toBe(3);

    agent.behaviour = workingAgent;
    const ok = await verify(c, body.runtimeId);
    expect(ok.json()).toMatchObject({ state: 'active', health: { consecutiveFailures: 0 } });
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 5000 })
      .toBe('handled');
    expect(pushedTo(job!.jobId)).toHaveLength(4);
  });
});

describe('replicas and crashes', () => {
  it('pushes each job exactly once with two dispatchers at work', async () => {
    const c = await w.account();
    const { body } = await create(c);
    agent.behaviour = (r) =>
      r.json.type === 'runtime.verification'
        ? workingAgent(r)
        : { status: 200, body: { outcome: 'handled' }, delayMs: 20 };
    dispatcher();
    dispatcher();
    for (let i = 0; i < 20; i++) await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId)).filter((j) => j.state === 'handled').length, {
        timeout: 10_000,
      })
      .toBe(20);
    const ids = (await jobsOf(c, body.runtimeId)).map((j) => j.jobId);
    const pushed = agent.jobs().filter((r) => ids.includes(r.json.jobId!));
    expect(pushed).toHaveLength(20);
    expect(new Set(pushed.map((p) => p.json.jobId)).size).toBe(20);
  });

  it('pushes a job again once the lease of a dispatcher that died runs out', async () => {
    const c = await w.account();
    const { body } = await create(c, { leaseSeconds: 30 });
    const e = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    // a process took the job and died before pushing it: its lease is in Postgres
    const runtime = (await ownRuntime(w.orm.em.fork(), c.accountId, body.runtimeId))!;
    await catchUp(w.ctx, c.accountId, body.runtimeId);
    const taken = await claimFor(w.ctx, runtime, ENDPOINT_WORKER, { due: true });
    expect(taken?.job.event_id).toBe(e.eventId);
    dispatcher();
    await new Promise((r) => setTimeout(r, 200));
    expect(pushedTo(taken!.job.id)).toEqual([]);
    w.clock.advance(31);
    await expect
      .poll(async () => (await jobsOf(c, body.runtimeId))[0]?.state, { timeout: 5000 })
      .toBe('handled');
    expect(pushedTo(taken!.job.id).map((p) => [p.json.attempts, p.json.version])).toEqual([[2, 2]]);
  });
});
