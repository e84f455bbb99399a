import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { insertApiKey } from '@oan/testing';
import { sweepPendingReplies } from '../src/commands/replies.ts';
import { replyAnswerText } from '../src/http/views.ts';
import type { ReplyAnswer, ReplyClient } from '../src/infra/replyClient.ts';
import type { ReplyCall } from '../src/domain/reply.ts';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

/**
 * The finish path of a reply against real Postgres, with the owning service played by a script: what
 * it answers decides whether the reply is done, still pending or refused (ADR 0031).
 */
let w: RuntimesWorld;
const sent: { call: ReplyCall; accountId: string; commandId: string }[] = [];
let answers: ReplyAnswer[] = [];
const owner: ReplyClient = {
  serves: () => true,
  send: async (call, accountId, commandId) => {
    sent.push({ call, accountId, commandId });
    return answers.shift() ?? { status: 202, text: '{"accepted":true}' };
  },
  close: async () => undefined,
};
beforeAll(async () => {
  w = await startRuntimesWorld();
  w.ctx.replies = owner;
});
afterAll(async () => {
  await w?.close();
});

interface Lease {
  jobId: string;
  version: number;
}

async function leasedQuestion(c: Caller, leaseSeconds = 60) {
  const { runtimeId } = (
    await w.call(c, 'POST', '/runtimes', { name: 'rt', policy: { types: ['gofer_question'], leaseSeconds } })
  ).json<{ runtimeId: string }>();
  await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
  const job = (await w.call(c, 'POST', `/runtimes/${runtimeId}/claim`, { worker: 'w1' })).json<{
    job: Lease;
  }>().job;
  const finish = (body: Record<string, unknown>) =>
    w.call(c, 'POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
      leaseOwner: 'w1',
      version: job.version,
      outcome: 'handled',
      ...body,
    });
  const state = async () =>
    (await w.call(c, 'GET', `/runtimes/${runtimeId}/jobs`)).json<
      { state: string; leaseOwner: string }[]
    >()[0]!;
  return { runtimeId, job, finish, state };
}

describe('a reply the owning service cannot take yet (503, or unreachable)', () => {
  it('stays pending, is never claimed meanwhile, and the same body again completes it once', async () => {
    const c = await w.account();
    const { runtimeId, job, finish, state } = await leasedQuestion(c, 5);
    sent.length = 0;
    answers = [{ status: 503, text: '{"error":"down","code":"SERVICE_UNAVAILABLE"}' }];
    const first = await finish({ reply: { content: 'yes' } });
    expect(first.statusCode).toBe(503);
    expect(first.json()).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
    w.clock.advance(10); // the lease ran out: the reply may have been carried out, so no one gets the job
    expect((await w.call(c, 'POST', `/runtimes/${runtimeId}/claim`, { worker: 'w2' })).json()).toEqual({
      job: null,
    });
    const other = await finish({ reply: { content: 'no' } });
    expect(other.statusCode).toBe(409);
    const done = await finish({ reply: { content: 'yes' } });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({
      job: { state: 'handled' },
      reply: { status: 202, body: { accepted: true } },
    });
    expect((await finish({ reply: { content: 'yes' } })).body).toBe(done.body);
    expect(sent.map((s) => s.commandId)).toEqual([
      `runtimes/${job.jobId}/${job.version}`,
      `runtimes/${job.jobId}/${job.version}`,
    ]);
    expect(sent[0]).toMatchObject({ accountId: c.accountId, call: { body: { content: 'yes' } } });
    expect((await state()).state).toBe('handled');
  });

  it('is completed by the sweep when no one sends it again', async () => {
    const c = await w.account();
    const { finish, state } = await leasedQuestion(c);
    answers = [{ status: 500, text: 'oops' }];
    expect((await finish({ reply: { content: 'later' } })).statusCode).toBe(503);
    const errors: unknown[] = [];
    const ended = await sweepPendingReplies(
      w.ctx,
      new Date(w.clock.now().getTime() + 1000),
      replyAnswerText,
      (e) => errors.push(e),
    );
    expect(ended).toBeGreaterThanOrEqual(1);
    expect(errors).toEqual([]);
    expect((await state()).state).toBe('handled');
    const pending = await sql(w.orm.em.fork(), `select 1 from runtimes.job_finishes where state = 'pending'`);
    expect(pending).toEqual([]);
  });
});

describe('a reply the owning service refuses', () => {
  it('answers its {error, code} as given, forgets the reply and leaves the lease to its holder', async () => {
    const c = await w.account();
    const { finish, state } = await leasedQuestion(c);
    const refusal = '{"error":"Thread is not waiting for confirmation.","code":"BAD_REQUEST"}';
    answers = [{ status: 400, text: refusal }];
    const refused = await finish({ reply: { content: 'yes' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual(JSON.parse(refusal));
    expect(await state()).toMatchObject({ state: 'leased', leaseOwner: 'w1' });
    // the holder may finish otherwise now
    const released = await finish({ outcome: 'released' });
    expect(released.statusCode).toBe(200);
    expect(released.json()).toMatchObject({ job: { state: 'queued' } });
  });
});

describe('a reply that cannot be sent as given', () => {
  it('is refused before anything is recorded or sent: a key without the permission, another outcome', async () => {
    const c = await w.account();
    const { runtimeId, job, finish } = await leasedQuestion(c);
    sent.length = 0;
    const { key } = await insertApiKey(w.world.authOrm, c.accountId, { permissions: ['message:read'] });
    const lacking = await w.call(
      { accountId: c.accountId, headers: { authorization: `Bearer ${key}` } },
      'POST',
      `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`,
      { leaseOwner: 'w1', version: job.version, outcome: 'handled', reply: { content: 'x' } },
    );
    expect(lacking.statusCode).toBe(403);
    expect(lacking.json()).toEqual({
      error: 'Forbidden: API key lacks permission message:send',
      code: 'FORBIDDEN',
    });
    const failed = await finish({ outcome: 'failed', reply: { content: 'x' } });
    expect(failed.statusCode).toBe(400);
    expect(sent).toEqual([]);
    const ok = await finish({ reply: { content: 'x' } });
    expect(ok.statusCode).toBe(200);
  });
});
