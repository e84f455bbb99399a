import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestConnector, TestFleet, waitFor } from '@oan/testing';
import { banAccount, proposeTwoAccounts } from './support.ts';

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
    const { a, ca, cb, gb, pb } = await proposeTwoAccounts(fleet, ['banned', 'honest']);
    connectors.push(ca, cb);
    const threadId = pb.threadId!;
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
