import type { ThreadEvent } from '@oan/domain';
import { scriptSession, summarizeSession, type SessionParty } from '../src/domain/scriptedSession.ts';
import { threadDecider, type ThreadCommand } from '../src/domain/thread.ts';
import { A, B, NOW, THREAD, hiring, seeker } from './fixtures.ts';

/**
 * The life of a thread as the services will drive it: discovery proposes, both sides confirm, the
 * session reactor runs the script and records both cards, both sides ask for the match at once.
 */
export function journey() {
  const events: ThreadEvent[] = [];
  const run = (command: ThreadCommand) => {
    const state = events.reduce(threadDecider.evolve, threadDecider.initialState());
    events.push(...threadDecider.decide({ ...command, metadata: { now: NOW } }, state));
  };
  const team: SessionParty = { goferId: A.goferId, profile: hiring };
  const engineer: SessionParty = { goferId: B.goferId, profile: seeker };

  run({ type: 'ProposePairing', data: { threadId: THREAD, mode: 'confirm', sides: [B, A], score: 0.6 } });
  for (const s of [A, B])
    run({ type: 'ConfirmPairing', data: { goferId: s.goferId, accountId: s.accountId, accepted: true } });
  const turns = scriptSession(team, engineer);
  for (const t of turns) run({ type: 'AddSessionTurn', data: t });
  run({ type: 'EndSession', data: {} });
  for (const [self, other] of [
    [team, engineer],
    [engineer, team],
  ] as const) {
    run({
      type: 'RecordSummaryCard',
      data: {
        goferId: self.goferId,
        card: summarizeSession(turns, self, other),
        photos: [{ attachmentId: `${other.goferId}-photo` }],
        documents: [],
        patchKind: null,
      },
    });
  }
  run({ type: 'RequestMatch', data: { requestId: 'r-a', goferId: A.goferId, accountId: A.accountId } });
  run({ type: 'RequestMatch', data: { requestId: 'r-b', goferId: B.goferId, accountId: B.accountId } });
  return { events, state: events.reduce(threadDecider.evolve, threadDecider.initialState()) };
}
