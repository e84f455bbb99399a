import { expect } from 'vitest';
import type { PublicProfile } from '../src/domain/discovery.ts';
import type { CloseReason, ThreadEvent, ThreadSide } from '@oan/domain';
import { threadDecider, type ThreadCommand } from '../src/domain/thread.ts';
import type { ThreadState } from '../src/domain/threadState.ts';
import { deciderSpec } from '@oan/testing';

export const NOW = '2026-11-29T08:00:00.000Z';

/** given(events).when(command).then(events) | .thenThrows(code, message?), at NOW. */
export const given = deciderSpec(expect, {
  ...threadDecider,
  decide: (command: ThreadCommand, state: ThreadState) =>
    threadDecider.decide({ ...command, metadata: { now: NOW } }, state),
});

/** Side `a` has the lower goferId. */
export const A: ThreadSide = {
  goferId: 'g-a',
  accountId: 'acc-a',
  name: 'Acme Hiring',
  sourcePlatform: 'dsh',
};
export const B: ThreadSide = { goferId: 'g-b', accountId: 'acc-b', name: 'Lin', sourcePlatform: 'openclaw' };
export const STRANGER = { goferId: 'g-x', accountId: 'acc-x' };
/** The pair's thread: the decider takes its id from the proposal (src/commands/threadIds.ts derives it). */
export const THREAD = '6d1f0c3a-52b7-8e49-a1c3-7f2e9b4d6a18';

export const proposed = (mode: 'confirm' | 'auto' = 'confirm'): ThreadEvent => ({
  type: 'ThreadProposed',
  data: { threadId: THREAD, mode, a: A, b: B, score: 0.6, proposedAt: NOW },
});
export const activated: ThreadEvent = {
  type: 'ThreadActivated',
  data: { threadId: THREAD, activatedAt: NOW },
};
export const confirmedBy = (s: ThreadSide): ThreadEvent => ({
  type: 'PairingConfirmed',
  data: { threadId: THREAD, goferId: s.goferId, accountId: s.accountId, confirmedAt: NOW },
});
export const closed = (reason: CloseReason, s: ThreadSide): ThreadEvent => ({
  type: 'ThreadClosed',
  data: { threadId: THREAD, reason, goferId: s.goferId, accountId: s.accountId, closedAt: NOW },
});
export const sessionEnded = (turnCount = 0): ThreadEvent => ({
  type: 'SessionEnded',
  data: { threadId: THREAD, turnCount, endedAt: NOW },
});
/** An auto-paired thread, running. */
export const running = (): ThreadEvent[] => [proposed('auto'), activated];

export const requested = (requestId: string, from: ThreadSide, to: ThreadSide): ThreadEvent => ({
  type: 'MatchRequested',
  data: {
    threadId: THREAD,
    requestId,
    requesterGoferId: from.goferId,
    requesterAccountId: from.accountId,
    recipientGoferId: to.goferId,
    recipientAccountId: to.accountId,
    requestedAt: NOW,
  },
});

export const hiring: PublicProfile = {
  name: 'Acme Hiring',
  description: 'A fintech startup team building payment APIs in TypeScript and Node.js, fully remote.',
  values: ['ownership', 'remote-first culture'],
  demands: ['hire a senior backend engineer', 'TypeScript and Node.js experience'],
};
export const seeker: PublicProfile = {
  name: 'Lin',
  description: 'Backend engineer with 6 years of Node.js and TypeScript experience, building APIs.',
  values: ['remote work', 'ownership'],
  demands: ['a remote backend engineering role', 'a product team building APIs'],
};
export const piano: PublicProfile = {
  name: 'Piano Parent',
  description: 'A parent in Berlin who loves music.',
  values: ['patience', 'kindness'],
  demands: ['a piano teacher for my daughter', 'weekend lessons'],
};
