import { describe, expect, it } from 'vitest';
import type { ThreadEvent } from '@oan/domain';
import { sessionTurnIdFor, summaryMessageIdFor } from '../src/domain/ids.ts';
import { cardDocuments, cardPhotos, type SessionCardFields } from '../src/domain/summaryCard.ts';
import type { ThreadCommand } from '../src/domain/thread.ts';
import { SESSION_MAX_TURNS } from '../src/domain/threadState.ts';
import { A, B, NOW, STRANGER, THREAD, closed, given, proposed, running, sessionEnded } from './fixtures.ts';

const turn = (turnIndex: number, sender = turnIndex % 2 === 0 ? A : B): ThreadCommand => ({
  type: 'AddSessionTurn',
  data: { turnIndex, senderGoferId: sender.goferId, content: `turn ${turnIndex}` },
});
const turnAdded = (turnIndex: number, sender = turnIndex % 2 === 0 ? A : B): ThreadEvent => ({
  type: 'SessionTurnAdded',
  data: {
    threadId: THREAD,
    turnId: sessionTurnIdFor(THREAD, turnIndex),
    turnIndex,
    senderGoferId: sender.goferId,
    content: `turn ${turnIndex}`,
    createdAt: NOW,
  },
});
const endSession: ThreadCommand = { type: 'EndSession', data: {} };

const fields: SessionCardFields = {
  content: 'Lin: strong match\n…',
  cardTitle: 'Lin: strong match',
  summary: 'Acme Hiring talked with Lin for 6 turns.',
  opponentRoleName: 'Lin',
  otherPartyHighlights: ['Offers: “Backend engineer”'],
  actionItems: ['Request a match with Lin to open a direct conversation.'],
  matchRecommendation: 'strong',
  pairReason: 'They offer what you look for: “backend engineer”.',
};
const record = (
  over: Partial<Extract<ThreadCommand, { type: 'RecordSummaryCard' }>['data']> = {},
): ThreadCommand => ({
  type: 'RecordSummaryCard',
  data: {
    goferId: A.goferId,
    card: fields,
    photos: [{ attachmentId: 'p1', width: 10, height: 20 }],
    documents: [{ attachmentId: 'd1', name: 'cv.txt', mimeType: 'text/plain', size: 3 }],
    patchKind: null,
    ...over,
  },
});
const cardFor = (
  version: number,
  patchKind: 'metadata_changed' | 'edited' | null,
  card = fields,
): ThreadEvent => ({
  type: 'SummaryCardRecorded',
  data: {
    threadId: THREAD,
    goferId: A.goferId,
    accountId: A.accountId,
    counterpartGoferId: B.goferId,
    ...card,
    messageId: summaryMessageIdFor(THREAD, A.goferId, version),
    version,
    patchKind,
    photos: JSON.stringify([
      { attachmentId: 'p1', width: 10, height: 20, messageId: null, ownerRoleId: B.goferId },
    ]),
    documents: JSON.stringify([
      {
        attachmentId: 'd1',
        name: 'cv.txt',
        mimeType: 'text/plain',
        size: 3,
        messageId: null,
        ownerRoleId: B.goferId,
      },
    ]),
    generatedAt: NOW,
  },
});

describe('when the session runs', () => {
  it('records the next turn with a deterministic id', () => {
    given(...running())
      .when(turn(0))
      .then(turnAdded(0));
    given(...running(), turnAdded(0))
      .when(turn(1))
      .then(turnAdded(1));
  });

  it('appends nothing for a step already recorded (redelivery)', () => {
    given(...running(), turnAdded(0), turnAdded(1))
      .when(turn(0))
      .thenNothing();
  });

  it('refuses a gap, a sender not in the thread, and a turn past the limit', () => {
    given(...running())
      .when(turn(1))
      .thenThrows('SESSION_TURN_OUT_OF_ORDER');
    given(...running())
      .when(turn(0, { ...B, ...STRANGER }))
      .thenThrows('NOT_A_PARTICIPANT');
    const full = Array.from({ length: SESSION_MAX_TURNS }, (_, i) => turnAdded(i));
    given(...running(), ...full)
      .when(turn(SESSION_MAX_TURNS))
      .thenThrows('SESSION_FULL');
  });

  it('takes no turn before both sides confirmed, nor on an unknown thread', () => {
    given(proposed()).when(turn(0)).thenThrows('THREAD_NOT_ACTIVE');
    given().when(turn(0)).thenThrows('THREAD_NOT_FOUND');
  });

  it('ends once, with the number of turns', () => {
    given(...running(), turnAdded(0), turnAdded(1))
      .when(endSession)
      .then(sessionEnded(2));
    given(...running(), sessionEnded())
      .when(endSession)
      .thenNothing();
    given(proposed()).when(endSession).thenThrows('THREAD_NOT_ACTIVE');
  });
});

describe('when a Gofer is deleted mid-session', () => {
  const history = [...running(), turnAdded(0), closed('gofer_deleted', B)];

  it('stops producing events: no turn, no end, no card', () => {
    given(...history)
      .when(turn(1))
      .thenNothing();
    given(...history)
      .when(endSession)
      .thenNothing();
    given(...history)
      .when(record())
      .thenNothing();
  });
});

describe('summary cards', () => {
  const ended = [...running(), turnAdded(0), sessionEnded(1)];

  it('records version 1 with the counterpart as owner of every asset, after the session ended', () => {
    const [event] = given(...ended)
      .when(record())
      .events();
    expect(event).toEqual(cardFor(1, null));
    if (event?.type !== 'SummaryCardRecorded') throw new Error('no card');
    expect(cardPhotos(event.data)).toEqual([
      { attachmentId: 'p1', width: 10, height: 20, messageId: null, ownerRoleId: B.goferId },
    ]);
    expect(cardDocuments(event.data)[0]?.ownerRoleId).toBe(B.goferId);
  });

  it('always carries both asset lists, empty when the counterpart has none', () => {
    const [event] = given(...ended)
      .when(record({ photos: [], documents: [] }))
      .events();
    expect(event).toMatchObject({ data: { photos: '[]', documents: '[]' } });
  });

  it('appends nothing when the same card is generated again', () => {
    given(...ended, cardFor(1, null))
      .when(record())
      .thenNothing();
  });

  it('records a changed card as the next version with its patchKind', () => {
    const edited = { ...fields, summary: 'Edited.' };
    given(...ended, cardFor(1, null))
      .when(record({ card: edited, patchKind: 'edited' }))
      .then(cardFor(2, 'edited', edited));
    given(...ended, cardFor(1, null))
      .when(record({ card: edited }))
      .then(cardFor(2, 'metadata_changed', edited));
  });

  it('refuses a card before the session ended or for a Gofer not in the thread', () => {
    given(...running())
      .when(record())
      .thenThrows('SESSION_NOT_ENDED');
    given(...ended)
      .when(record({ goferId: STRANGER.goferId }))
      .thenThrows('NOT_A_PARTICIPANT');
  });
});
