import { randomUUID } from 'node:crypto';
import { describe } from 'vitest';
import type { ThreadEvent, ThreadSide } from '@oan/domain';
import { matchingProjection } from '../src/matching/index.ts';
import { threadOf } from './support/matching.ts';
import { projectionSpec } from './support/projectionSpec.ts';

// The whole confirm-mode journey through the matching decider is in
// services/projector/test/matchingProjection.int.test.ts (it drives the decider of services/matching).
const spec = projectionSpec(matchingProjection, {
  ctx: { webBaseUrl: 'https://web.example/' },
  rows: {
    threads: 'select * from read.threads order by id',
    messages: 'select * from read.thread_messages order by thread_id, turn_index',
    cards: 'select * from read.pairing_cards order by thread_id, gofer_id',
    requests: 'select * from read.match_requests order by id',
  },
});

const side = (name: string): ThreadSide => ({
  goferId: `g-${randomUUID()}`,
  accountId: `acc-${randomUUID()}`,
  name,
  sourcePlatform: 'dsh',
});

describe('a thread of its own', () => {
  /** A fresh thread per case: `given` applied first, then `event` twice. */
  const twice = (given: ThreadEvent['type'][], event: ThreadEvent['type']) => {
    const t = threadOf(`t-${randomUUID()}`, side('Ada'), side('Bo'));
    return { given: () => given.map((type) => t[type]()), event: () => t[event]() };
  };
  const active = ['ThreadProposed', 'PairingConfirmed', 'ThreadActivated'] as const;
  spec.appliedTwice<ThreadEvent>({
    ThreadProposed: twice([], 'ThreadProposed'),
    PairingConfirmed: twice(['ThreadProposed'], 'PairingConfirmed'),
    ThreadActivated: twice(['ThreadProposed', 'PairingConfirmed'], 'ThreadActivated'),
    SessionTurnAdded: twice([...active], 'SessionTurnAdded'),
    SessionEnded: twice([...active, 'SessionTurnAdded'], 'SessionEnded'),
    SummaryCardRecorded: twice([...active, 'SessionTurnAdded', 'SessionEnded'], 'SummaryCardRecorded'),
    MatchRequested: twice([...active, 'SessionEnded'], 'MatchRequested'),
    MatchRequestDecided: twice([...active, 'SessionEnded', 'MatchRequested'], 'MatchRequestDecided'),
    ThreadClosed: twice([...active, 'MatchRequested'], 'ThreadClosed'),
  });
});
