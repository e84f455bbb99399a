import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadSide } from '@oan/domain';
import { runThreadCommand } from '../src/commands/context.ts';
import { proposePairing, sharedThreadId, threadIdFor } from '../src/commands/threadIds.ts';
import { startMatchingFleet, type MatchingFleet } from './helpers.ts';
import { legacyThreadIdFor } from './legacyIds.ts';

let fleet: MatchingFleet;
beforeAll(async () => {
  fleet = await startMatchingFleet();
});
afterAll(async () => fleet?.close());

/** A Gofer of a fresh account, as discovery snapshots it. */
async function side(name: string): Promise<ThreadSide> {
  const { accountId } = await fleet.account();
  return { goferId: randomUUID(), accountId, name, sourcePlatform: 'dsh' };
}

describe('a pair proposed before thread ids were keyed', () => {
  it('is found again: proposing the pair reaches the existing thread and appends nothing', async () => {
    const [x, y] = await Promise.all([side('Acme Hiring'), side('Lin')]);
    const legacyId = legacyThreadIdFor(x.goferId, y.goferId);
    // The proposal as the service recorded it then: the same command, on the UUIDv5 id.
    await runThreadCommand(fleet.ctx, legacyId, {
      type: 'ProposePairing',
      data: { threadId: legacyId, mode: 'confirm', sides: [x, y], score: 0.6 },
    });
    expect(await sharedThreadId(fleet.ctx, y.goferId, x.goferId)).toBe(legacyId);
    const before = await fleet.eventCount();
    const again = await proposePairing(fleet.ctx, { mode: 'confirm', sides: [y, x], score: 0.7 });
    expect(again).toEqual({ threadId: legacyId, appended: [] });
    expect(await fleet.eventCount()).toBe(before);
    expect(await fleet.events(threadIdFor(fleet.ctx.idSecret, x.goferId, y.goferId))).toEqual([]);
  });
});

describe('a new pair', () => {
  it('gets the thread id keyed by ID_SECRET, once, whichever side discovery starts from', async () => {
    const [x, y] = await Promise.all([side('Acme Hiring'), side('Lin')]);
    expect(await sharedThreadId(fleet.ctx, x.goferId, y.goferId)).toBeNull();
    const first = await proposePairing(fleet.ctx, { mode: 'auto', sides: [x, y], score: 0.6 });
    expect(first.threadId).toBe(threadIdFor(fleet.config.ID_SECRET, x.goferId, y.goferId));
    expect(first.threadId).not.toBe(legacyThreadIdFor(x.goferId, y.goferId));
    expect(first.appended.map((e) => e.type)).toEqual(['ThreadProposed', 'ThreadActivated']);
    const [second, third] = await Promise.all([
      proposePairing(fleet.ctx, { mode: 'auto', sides: [y, x], score: 0.6 }),
      proposePairing(fleet.ctx, { mode: 'auto', sides: [x, y], score: 0.6 }),
    ]);
    expect([second, third]).toEqual([
      { threadId: first.threadId, appended: [] },
      { threadId: first.threadId, appended: [] },
    ]);
    expect(await fleet.events(first.threadId)).toHaveLength(2);
  });

  it('does not share a thread with a pair that has one Gofer in common', async () => {
    const [x, y, z] = await Promise.all([side('Acme Hiring'), side('Lin'), side('Ada')]);
    await proposePairing(fleet.ctx, { mode: 'confirm', sides: [x, y], score: 0.6 });
    await proposePairing(fleet.ctx, { mode: 'confirm', sides: [x, z], score: 0.6 });
    expect(await sharedThreadId(fleet.ctx, y.goferId, z.goferId)).toBeNull();
    const yz = await proposePairing(fleet.ctx, { mode: 'confirm', sides: [y, z], score: 0.6 });
    expect(yz.threadId).toBe(threadIdFor(fleet.config.ID_SECRET, y.goferId, z.goferId));
    expect(yz.appended).toHaveLength(1);
  });
});
