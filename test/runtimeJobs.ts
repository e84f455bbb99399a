import { expect } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { waitFor, type TestConnector } from '@oan/testing';

/** The scripted brain's interview: after these three it sums up and asks to start (a `gofer_question`). */
const ANSWERS = [
  'I want to hire a senior backend engineer for my team, remote, TypeScript and Postgres.',
  'We are a small fintech team building payment APIs; we offer a good salary and ownership.',
  'Honesty, fast feedback, remote-first work.',
];

export interface ClaimedJob {
  jobId: string;
  event: OanEventEnvelope;
  attempts: number;
  leaseOwner: string;
  version: number;
}

export interface ChatItem {
  id: string;
  role: string;
  content: string;
}

export const chat = async (c: TestConnector, goferId: string) =>
  (await c.rest<ChatItem[]>('GET', `/gofers/${goferId}/chat/messages`)).body;

/**
 * A Gofer whose interview is answered until it asks its owner a question, and a runtime of
 * `gofer_question`s that got it as a job, claimed by `worker`.
 */
export async function goferQuestionJob(
  c: TestConnector,
  worker: string,
  leaseSeconds = 60,
): Promise<{ runtimeId: string; goferId: string; job: ClaimedJob }> {
  const registered = await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
    name: 'answers',
    policy: { types: ['gofer_question'], leaseSeconds },
  });
  expect(registered.status).toBe(201);
  const { runtimeId } = registered.body;
  const created = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
  expect(created.status).toBe(201);
  const { goferId } = created.body;
  for (const [i, content] of ANSWERS.entries()) {
    const before = (await chat(c, goferId)).length;
    expect((await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content })).status).toBe(202);
    // the Gofer's next question follows the message (user + assistant); the last one is the job
    if (i < ANSWERS.length - 1)
      await waitFor(async () => (await chat(c, goferId)).length >= before + 2, {
        timeoutMs: 20_000,
        what: 'the Gofer to answer',
      });
  }
  const job = await waitFor(
    async () =>
      (await c.rest<{ job: ClaimedJob | null }>('POST', `/runtimes/${runtimeId}/claim`, { worker, wait: 5 }))
        .body.job ?? undefined,
    { timeoutMs: 30_000, what: "the Gofer's question as a job" },
  );
  expect(job.event).toMatchObject({ type: 'gofer_question', goferId });
  return { runtimeId, goferId, job };
}
