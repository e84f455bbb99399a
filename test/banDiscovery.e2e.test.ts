import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { awaitEnvelope, banAccount, interviewToReady } from './support.ts';

let fleet: TestFleet;
const connectors: TestConnector[] = [];
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  for (const c of connectors) c.close();
  await fleet?.stop();
});

describe('when an account whose Gofer was just paired is banned', () => {
  it('the counterpart reads the thread as closed, as after a rejection', { timeout: 180_000 }, async () => {
    const [a, b] = await Promise.all([
      joinAccount(fleet.url, fleet.mailbox, `banned-${fleet.id}@example.com`, 'dsh'),
      joinAccount(fleet.url, fleet.mailbox, `honest-${fleet.id}@example.com`, 'openclaw'),
    ]);
    const [ca, cb] = [a, b].map((x) => new TestConnector({ baseUrl: fleet.url, token: x.apiKey })) as [
      TestConnector,
      TestConnector,
    ];
    connectors.push(ca, cb);
    await Promise.all([ca.connect(), cb.connect()]);
    const gofer = async (c: TestConnector) =>
      (await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body.goferId;
    const [ga, gb] = [await gofer(ca), await gofer(cb)];
    await Promise.all([
      interviewToReady(ca, ga, [
        'We are hiring a backend engineer: remote, TypeScript, Postgres, Kafka.',
        'We are a fintech team building payment APIs, fully remote, offering equity and mentoring.',
        'Ownership, honesty, remote-first collaboration.',
        'Call you Team Scout.',
      ]),
      interviewToReady(cb, gb, [
        'I am looking for a remote backend engineering role with TypeScript and Postgres at a fintech team.',
        'I am a backend engineer with eight years of TypeScript, Postgres and Kafka building payment APIs.',
        'Remote work, ownership, honest feedback.',
        'Call you Career Scout.',
      ]),
    ]);
    const { threadId } = await awaitEnvelope(cb, 'pair_proposed', gb);
    expect((await cb.rest<{ status: string }>('GET', `/threads/${threadId}`)).body.status).toBe(
      'awaiting_confirmation',
    );

    banAccount(fleet, a.userId);
    await waitFor(
      async () => (await cb.rest<{ status: string }>('GET', `/threads/${threadId}`)).body.status === 'closed',
      { timeoutMs: 30_000, what: 'the banned side’s thread to read as closed' },
    );
    const list = await cb.rest<{ id: string; status: string }[]>('GET', '/threads');
    expect(list.body).toEqual([expect.objectContaining({ id: threadId, status: 'closed' })]);
    // The counterpart's confirm is the literal 400 of a thread no longer waiting.
    const confirm = await cb.rest<{ error: string }>('POST', `/threads/${threadId}/pair/confirm`, {
      roleId: gb,
      accepted: true,
    });
    expect(confirm.status).toBe(400);
    expect(confirm.body.error).toContain('Thread is not waiting for confirmation');
  });
});
