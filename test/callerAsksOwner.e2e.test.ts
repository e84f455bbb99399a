import { connect, address as coAddress } from 'connectonion';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { chat, type ClaimedJob } from './runtimeJobs.ts';

/**
 * ADR 0036 through the edge: a caller on the relay asks what only the owner can answer, the owner's
 * runtime gets the Gofer's question as a job and finishes it with a reply, and the caller hears
 * the owner's answer at its next turn. The scripted brain throughout.
 */
let fleet: TestFleet;
let owner: TestConnector;
beforeAll(async () => {
  fleet = await TestFleet.start({
    only: [
      'auth',
      'gofers',
      'runtimes',
      'outbox',
      'projector',
      'gateway1',
      'gateway2',
      'agents1',
      'agents2',
      'edge',
    ],
  });
  const a = await joinAccount(fleet.url, fleet.mailbox, `ask-owner-${fleet.id}@example.com`, 'dsh');
  owner = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
}, 120_000);
afterAll(async () => {
  await fleet?.stop();
});

describe("a relay caller's question only the owner can answer, answered by the owner's runtime", () => {
  it('becomes a job like any gofer_question, and its reply reaches the caller once', async () => {
    const runtime = await owner.rest<{ runtimeId: string }>('POST', '/runtimes', {
      name: 'desk',
      policy: { types: ['gofer_question'] },
    });
    expect(runtime.status).toBe(201);
    const { runtimeId } = runtime.body;
    const { goferId } = (await owner.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body;
    const { address } = (await owner.rest<{ address: string }>('PUT', `/gofers/${goferId}/relay`)).body;

    const remote = connect(address, {
      relayUrl: fleet.url.replace('http://', 'ws://'),
      keys: coAddress.generate(),
    });
    const first = await remote.input('Is your owner available on Friday afternoon?', { timeoutMs: 20_000 });
    expect(first.text).toContain("I'll ask my owner and come back to you");

    const job = await waitFor(
      async () =>
        (
          await owner.rest<{ job: ClaimedJob | null }>('POST', `/runtimes/${runtimeId}/claim`, {
            worker: 'w1',
            wait: 5,
          })
        ).body.job ?? undefined,
      { timeoutMs: 30_000, what: "the Gofer's question as a job" },
    );
    expect(job.event).toMatchObject({
      type: 'gofer_question',
      goferId,
      payload: { kind: 'caller_question' },
    });
    expect(String(job.event.payload.content)).toContain('"Is your owner available on Friday afternoon?"');

    const done = await owner.rest<{ reply: { status: number } }>(
      'POST',
      `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`,
      {
        leaseOwner: 'w1',
        version: job.version,
        outcome: 'handled',
        reply: { content: 'Friday after 3pm works.' },
      },
    );
    expect(done.status).toBe(200);
    expect(done.body.reply.status).toBe(202);

    // The owner is told the answer was passed on; the brain never took it for an interview answer.
    const rows = await waitFor(
      async () => {
        const items = await chat(owner, goferId);
        return items.some((m) => m.content.includes('passed your answer on')) && items;
      },
      { timeoutMs: 20_000, what: 'the answer passed on' },
    );
    const answer = rows.findIndex((m) => m.role === 'user' && m.content === 'Friday after 3pm works.');
    expect(rows.slice(answer + 1).map((m) => m.role)).toEqual(['assistant']);

    const next = await remote.input('Hello again', { timeoutMs: 20_000 });
    expect(next.text).toMatch(/^My owner answered your earlier question: "Friday after 3pm works."\n\n/);
    const after = await remote.input('Thanks!', { timeoutMs: 20_000 });
    expect(after.text).not.toContain('Friday after 3pm');
  });
});
