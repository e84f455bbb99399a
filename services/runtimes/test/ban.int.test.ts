import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { AgentEndpoint } from '@oan/testing';
import { catchUp, claimFor } from '../src/commands/jobs.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { ENDPOINT_WORKER } from '../src/dispatch/push.ts';
import { dueRuntimes } from '../src/dispatch/store.ts';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

/** A ban stops every push and every claim of the account's runtimes at once (docs/security.md). */
let w: RuntimesWorld;
let agent: AgentEndpoint;
let dispatcher: Dispatcher | undefined;
beforeAll(async () => {
  w = await startRuntimesWorld({ RUNTIMES_ALLOW_LOOPBACK: 'true', RUNTIMES_CLAIM_RECHECK_MS: '100' });
  agent = await AgentEndpoint.start();
});
afterEach(async () => {
  await dispatcher?.stop();
  dispatcher = undefined;
});
afterAll(async () => {
  await agent?.close();
  await w?.close();
});

const ban = (c: Caller) =>
  sql(w.world.authOrm.em.fork(), 'update auth.accounts set banned_at = now() where id = ?', [c.accountId]);

async function runtime(c: Caller, endpoint?: string) {
  const res = await w.call(c, 'POST', '/runtimes', {
    name: 'rt',
    policy: { types: ['gofer_question'] },
    ...(endpoint ? { endpoint } : {}),
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ runtimeId: string; state: string }>();
}
const jobStates = async (runtimeId: string) =>
  (
    await sql<{ state: string }>(
      w.orm.em.fork(),
      'select state from runtimes.jobs where runtime_id = ? order by seq',
      [runtimeId],
    )
  ).map((r) => r.state);

describe('a banned account with a verified endpoint runtime', () => {
  it('has no runtime due and nothing pushed, though jobs wait and envelopes follow its cursor', async () => {
    const c = await w.account();
    const rt = await runtime(c, agent.url);
    expect(rt.state).toBe('active');
    // one job already made before the ban, one envelope not read yet after it
    const before = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await catchUp(w.ctx, c.accountId, rt.runtimeId);
    expect(await jobStates(rt.runtimeId)).toEqual(['queued']);
    await ban(c);
    const after = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });

    const em = w.orm.em.fork();
    expect((await dueRuntimes(em, w.clock.now(), 1000)).map((r) => r.id)).not.toContain(rt.runtimeId);
    // the job held for it is not handed out either, whoever asks
    const row = await catchUp(w.ctx, c.accountId, rt.runtimeId);
    expect(await claimFor(w.ctx, row, ENDPOINT_WORKER, { due: true })).toBeNull();

    dispatcher = new Dispatcher({
      ctx: w.ctx,
      endpoints: w.endpoints,
      concurrency: 4,
      pollMs: 30,
      log: w.app.log,
    });
    dispatcher.start();
    dispatcher.wake();
    await new Promise((r) => setTimeout(r, 300)); // ten polls: nothing may be pushed meanwhile
    const pushed = agent.jobs().map((r) => (r.json.event as { eventId: string }).eventId);
    expect(pushed).not.toContain(before.eventId);
    expect(pushed).not.toContain(after.eventId);
    expect(await jobStates(rt.runtimeId)).toEqual(['queued', 'queued']);
  });
});

describe('a banned account with a runtime its workers claim from', () => {
  it('is refused a claim, and a claim held from before the ban is handed nothing', async () => {
    const c = await w.account();
    const rt = await runtime(c);
    const held = w.call(c, 'POST', `/runtimes/${rt.runtimeId}/claim`, { worker: 'w1', wait: 2 });
    await new Promise((r) => setTimeout(r, 200)); // the claim is held by now (it found nothing)
    await ban(c);
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    w.ctx.waiters.wake(c.accountId);
    const answer = await held;
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ job: null });

    const refused = await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/claim`, { worker: 'w1' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'Forbidden: account banned' });
  });
});
