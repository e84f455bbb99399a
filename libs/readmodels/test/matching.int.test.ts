import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ThreadEvent, ThreadSide } from '@oan/domain';
import { readModelTables } from '@oan/projection';
import type { NotificationSpec } from '@oan/readmodels';
import { matchingProjection, SUMMARY_PREVIEW_LENGTH } from '../src/matching/index.ts';
import { at } from './support/events.ts';
import { threadOf } from './support/matching.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const WEB = 'https://web.example';
const spec = projectionSpec(matchingProjection, {
  ctx: { webBaseUrl: `${WEB}/` },
  rows: {
    threads: 'select * from read.threads order by id',
    messages: 'select * from read.thread_messages order by thread_id, turn_index',
    cards: 'select * from read.pairing_cards order by thread_id, gofer_id',
    requests: 'select * from read.match_requests order by id',
  },
});
const rows = <T = Record<string, unknown>>(q: string, params: unknown[] = []) => spec.query<T>(q, params);

const A: ThreadSide = { goferId: 'g-a', accountId: 'acc-a', name: 'Acme Hiring', sourcePlatform: 'dsh' };
const B: ThreadSide = { goferId: 'g-b', accountId: 'acc-b', name: 'Lin', sourcePlatform: 'openclaw' };
const THREAD = `t-${randomUUID()}`;
const MATCH = `m-${THREAD}`;
const CONVERSATION = `c-${THREAD}`;
const thread = threadOf(THREAD, A, B);

/** The session's six turns, each side in turn. */
const turns = Array.from({ length: 6 }, (_, i) => ({
  turnId: `${THREAD}-t${i}`,
  turnIndex: i,
  senderGoferId: i % 2 === 0 ? A.goferId : B.goferId,
  content: `turn ${i} of the session`,
}));
/** Each side's card, of the other side; the summary is longer than the card preview. */
const card = (self: ThreadSide, other: ThreadSide) => ({
  goferId: self.goferId,
  accountId: self.accountId,
  counterpartGoferId: other.goferId,
  messageId: `${THREAD}-card-${self.goferId}`,
  content: `What ${self.name} learnt of ${other.name}`,
  cardTitle: `${other.name}, a fit`,
  summary: `${other.name} wants what ${self.name} offers. `.repeat(12),
  opponentRoleName: other.name,
  otherPartyHighlights: ['remote', 'backend'],
  actionItems: ['arrange a call'],
  matchRecommendation: 'strong' as const,
  pairReason: 'shared values',
  photos: JSON.stringify([
    { attachmentId: `${other.goferId}-photo`, messageId: null, ownerRoleId: other.goferId },
  ]),
  documents: '[]',
});

/** A confirm-mode thread from its proposal to the match both sides asked for at once. */
const history = [
  thread.ThreadProposed(),
  thread.PairingConfirmed({ goferId: A.goferId, accountId: A.accountId }),
  thread.PairingConfirmed({ goferId: B.goferId, accountId: B.accountId }),
  thread.ThreadActivated(),
  ...turns.map((t, i) => thread.SessionTurnAdded({ ...t, createdAt: at(10 + i) })),
  thread.SessionEnded({ turnCount: 6 }),
  thread.SummaryCardRecorded(card(A, B)),
  thread.SummaryCardRecorded(card(B, A)),
  thread.MatchRequested({ requestId: 'r-a' }),
  thread.MatchRequestDecided({
    requestId: 'r-a',
    decidedBy: 'cross_request',
    matchId: MATCH,
    conversationId: CONVERSATION,
  }),
];
const proposal = history.slice(0, 1);
const rest = history.slice(1);
let proposalNotes: NotificationSpec[] = [];
let restNotes: NotificationSpec[] = [];

describe('the matching projection over a whole confirm-mode thread', () => {
  it('sends pair_proposed to each side once, with a reply, and opens two pending cards', async () => {
    proposalNotes = await spec.when(...proposal);
    expect(proposalNotes).toHaveLength(2);
    const [toA, toB] = proposalNotes;
    for (const [note, self, other] of [
      [toA, A, B],
      [toB, B, A],
    ] as const) {
      expect(note).toEqual({
        recipient: self.accountId,
        discriminator: self.goferId,
        type: 'pair_proposed',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        reply: `/threads/${THREAD}/pair/confirm`,
        webUrl: `${WEB}/threads/${THREAD}`,
        payload: { counterpartRoleName: other.name, counterpartSourcePlatform: other.sourcePlatform },
        createdAt: at(0),
      });
    }
    const notes = await spec.when(...proposal);
    expect(notes.map((n) => n.recipient)).toEqual([A.accountId, B.accountId]);

    const cards = await rows('select * from read.pairing_cards where thread_id = ? order by gofer_id', [
      THREAD,
    ]);
    expect(cards).toHaveLength(2);
    expect(cards[0]).toMatchObject({
      id: `${THREAD}:${A.goferId}`,
      thread_id: THREAD,
      gofer_id: A.goferId,
      account_id: A.accountId,
      role_name: A.name,
      pairing_status: 'awaiting_confirmation',
      dynamic_status: 'pending',
      card_title: null,
      summary_preview: null,
      opponent_gofer_id: B.goferId,
      opponent_role_name: B.name,
      opponent_source_platform: B.sourcePlatform,
      cover_photo: null,
      photo_count: 0,
      card_payload: null,
    });
    const [t] = await rows('select * from read.threads where id = ?', [THREAD]);
    expect(t).toMatchObject({
      id: THREAD,
      mode: 'confirm',
      status: 'awaiting_confirmation',
      a_gofer_id: A.goferId,
      a_account_id: A.accountId,
      a_name: A.name,
      a_source_platform: A.sourcePlatform,
      a_confirmed_at: null,
      b_gofer_id: B.goferId,
      b_account_id: B.accountId,
      b_name: B.name,
      b_source_platform: B.sourcePlatform,
      b_confirmed_at: null,
      score: 0.6,
      turn_count: 0,
      match_id: null,
    });
  });

  it('records the session, one summary card per side and the match (a cross request)', async () => {
    restNotes = await spec.when(...rest);
    expect(restNotes.map((n) => `${n.type}:${n.goferId}`)).toEqual([
      `session_summary:${A.goferId}`,
      `session_summary:${B.goferId}`,
      `match_request:${B.goferId}`,
      `match_decided:${A.goferId}`,
      `match_decided:${B.goferId}`,
    ]);

    const [t] = await rows<Record<string, unknown>>('select * from read.threads where id = ?', [THREAD]);
    expect(t).toMatchObject({
      status: 'session_ended',
      turn_count: 6,
      match_id: MATCH,
      conversation_id: CONVERSATION,
      closed_reason: null,
    });
    expect(t!.a_confirmed_at).not.toBeNull();
    expect(t!.b_confirmed_at).not.toBeNull();
    const messages = await rows<{ sender_gofer_id: string; content: string }>(
      'select * from read.thread_messages where thread_id = ? order by turn_index',
      [THREAD],
    );
    expect(messages.map((m) => m.sender_gofer_id)).toEqual(turns.map((x) => x.senderGoferId));
    expect(messages.map((m) => m.content)).toEqual(turns.map((x) => x.content));
    expect(await rows('select * from read.match_requests where thread_id = ?', [THREAD])).toEqual([
      expect.objectContaining({
        id: 'r-a',
        thread_id: THREAD,
        requester_gofer_id: A.goferId,
        requester_account_id: A.accountId,
        recipient_gofer_id: B.goferId,
        recipient_account_id: B.accountId,
        status: 'accepted',
        decided_by: 'cross_request',
        match_id: MATCH,
        conversation_id: CONVERSATION,
      }),
    ]);

    const cardA = card(A, B);
    const [rowA] = await rows<Record<string, unknown>>(
      'select * from read.pairing_cards where thread_id = ? order by gofer_id',
      [THREAD],
    );
    expect(rowA).toMatchObject({
      gofer_id: A.goferId,
      pairing_status: 'session_ended',
      dynamic_status: 'ready',
      card_title: cardA.cardTitle,
      opponent_role_name: cardA.opponentRoleName,
      cover_photo: { attachmentId: `${B.goferId}-photo`, messageId: null, ownerRoleId: B.goferId },
      photo_count: 1,
      card_version: 1,
    });
    const summaryPreview = rowA!.summary_preview as string;
    expect(cardA.summary.length).toBeGreaterThan(SUMMARY_PREVIEW_LENGTH);
    expect(summaryPreview.length).toBeLessThanOrEqual(SUMMARY_PREVIEW_LENGTH);
    expect(cardA.summary.startsWith(summaryPreview.replace(/…$/, ''))).toBe(true);
    expect(rowA!.card_payload).toEqual(restNotes[0]!.payload);
  });

  it('shapes session_summary: the whitelist, threadId twice, both arrays, no patchKind', () => {
    for (const [note, self, other] of [
      [restNotes[0]!, A, B],
      [restNotes[1]!, B, A],
    ] as const) {
      const c = card(self, other);
      expect(note).toEqual({
        recipient: self.accountId,
        type: 'session_summary',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        webUrl: `${WEB}/threads/${THREAD}`,
        payload: {
          messageId: c.messageId,
          content: c.content,
          createdAt: at(5),
          kind: 'session_summary',
          summaryKey: `${THREAD}:${self.goferId}`,
          threadId: THREAD,
          cardTitle: c.cardTitle,
          summary: c.summary,
          opponentRoleName: c.opponentRoleName,
          otherPartyHighlights: c.otherPartyHighlights,
          actionItems: c.actionItems,
          matchRecommendation: c.matchRecommendation,
          pairReason: c.pairReason,
          photos: [{ attachmentId: `${other.goferId}-photo`, messageId: null, ownerRoleId: other.goferId }],
          documents: [],
        },
        createdAt: at(5),
      });
      // The projector writes the payload as JSON.stringify gives it: the key order is the wire's.
      expect(Object.keys(note.payload)).toEqual([
        'messageId',
        'content',
        'createdAt',
        'kind',
        'summaryKey',
        'threadId',
        'cardTitle',
        'summary',
        'opponentRoleName',
        'otherPartyHighlights',
        'actionItems',
        'matchRecommendation',
        'pairReason',
        'photos',
        'documents',
      ]);
    }
  });

  it('sends match_request to the recipient and match_decided to both sides with its own goferId', () => {
    const [, , request, decidedA, decidedB] = restNotes;
    expect(request).toEqual({
      recipient: B.accountId,
      type: 'match_request',
      source: 'platform',
      goferId: B.goferId,
      threadId: THREAD,
      reply: '/match-requests/r-a/decision',
      payload: { requestId: 'r-a', counterpartRoleName: A.name, counterpartSourcePlatform: A.sourcePlatform },
      createdAt: at(6),
    });
    for (const [note, self] of [
      [decidedA!, A],
      [decidedB!, B],
    ] as const) {
      expect(note).toEqual({
        recipient: self.accountId,
        discriminator: self.goferId,
        type: 'match_decided',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        conversationId: CONVERSATION,
        payload: { requestId: 'r-a', status: 'accepted', matchId: MATCH, conversationId: CONVERSATION },
        createdAt: at(7),
      });
    }
  });

  it('applied twice, changes nothing and yields the same notifications', async () => {
    const before = await spec.rows();
    expect(await spec.when(...history)).toEqual([...proposalNotes, ...restNotes]);
    expect(await spec.rows()).toEqual(before);
    // A redelivered middle of the stream (after the end) moves nothing back either.
    await spec.when(...history.slice(3, 12));
    expect(await spec.rows()).toEqual(before);
  });

  it('is replay-ready: every matching table is emptied by replay and rebuilt identically', async () => {
    const tables = await spec.withEm(readModelTables);
    for (const t of ['read.threads', 'read.thread_messages', 'read.pairing_cards', 'read.match_requests'])
      expect(tables).toContain(t);
    const before = await spec.rows();
    await rows(`truncate ${tables.join(', ')}`);
    await spec.when(...history);
    expect(await spec.rows()).toEqual(before);
  });
});

describe('card regeneration, auto-pairing, rejections and closing', () => {
  const C: ThreadSide = { goferId: 'g-c', accountId: 'acc-c', name: 'Cleo', sourcePlatform: 'hermes' };
  const D: ThreadSide = { goferId: 'g-d', accountId: 'acc-d', name: 'Dan', sourcePlatform: 'other' };

  it('a regenerated card yields a second session_summary with patchKind and replaces the card', async () => {
    const photos = [
      { attachmentId: `${B.goferId}-photo`, messageId: null, ownerRoleId: B.goferId },
      { attachmentId: 'p2', messageId: null, ownerRoleId: B.goferId, width: 10, height: 20 },
    ];
    const documents = [
      {
        attachmentId: 'doc1',
        messageId: null,
        ownerRoleId: B.goferId,
        name: 'cv.pdf',
        mimeType: 'application/pdf',
        size: 3,
      },
    ];
    const regenerated = thread.SummaryCardRecorded({
      ...card(A, B),
      messageId: `${THREAD}-card-a-2`,
      version: 2,
      patchKind: 'edited',
      photos: JSON.stringify(photos),
      documents: JSON.stringify(documents),
    });
    const [note] = await spec.when(regenerated);
    expect(note).toMatchObject({ type: 'session_summary', goferId: A.goferId, threadId: THREAD });
    expect(note!.payload).toMatchObject({ patchKind: 'edited', threadId: THREAD, photos, documents });
    const [row] = await rows('select * from read.pairing_cards where thread_id = ? and gofer_id = ?', [
      THREAD,
      A.goferId,
    ]);
    expect(row).toMatchObject({ card_version: 2, photo_count: 2, card_payload: note!.payload });
    // The first version redelivered after the second does not overwrite it.
    await spec.when(...history.filter((e) => e.type === 'SummaryCardRecorded'));
    const [still] = await rows(
      'select card_version from read.pairing_cards where thread_id = ? and gofer_id = ?',
      [THREAD, A.goferId],
    );
    expect(still).toEqual({ card_version: 2 });
  });

  it('an auto-pair sends pair_proposed without reply; a rejected request gives null ids', async () => {
    const CD = `t-${randomUUID()}`;
    const t = threadOf(CD, C, D);
    const sides = {
      requestId: 'r-c',
      requesterGoferId: C.goferId,
      requesterAccountId: C.accountId,
      recipientGoferId: D.goferId,
      recipientAccountId: D.accountId,
    };
    const notes = await spec.when(
      t.ThreadProposed({ mode: 'auto', score: 0.5 }),
      t.ThreadActivated(),
      t.MatchRequested(sides),
      t.MatchRequestDecided({ ...sides, status: 'rejected', matchId: null, conversationId: null }),
    );
    expect(notes.map((n) => `${n.type}:${n.goferId}`)).toEqual([
      `pair_proposed:${C.goferId}`,
      `pair_proposed:${D.goferId}`,
      `match_request:${D.goferId}`,
      `match_decided:${C.goferId}`,
      `match_decided:${D.goferId}`,
    ]);
    for (const n of notes.slice(0, 2)) expect(n.reply).toBeUndefined();
    expect(notes[0]!.payload).toEqual({
      counterpartRoleName: D.name,
      counterpartSourcePlatform: D.sourcePlatform,
    });
    for (const n of notes.slice(3)) {
      expect(n.payload).toEqual({
        requestId: 'r-c',
        status: 'rejected',
        matchId: null,
        conversationId: null,
      });
      expect(n.conversationId).toBeUndefined();
    }
    const [th] = await rows('select * from read.threads where id = ?', [CD]);
    expect(th).toMatchObject({ mode: 'auto', status: 'active', match_id: null, conversation_id: null });
    const [r] = await rows('select * from read.match_requests where id = ?', ['r-c']);
    expect(r).toMatchObject({ status: 'rejected', decided_by: 'recipient', match_id: null });

    // A new request on the same thread, then a deleted Gofer closes it: the request is cancelled.
    const again = { ...sides, requestId: 'r-d' };
    const closing = [
      t.MatchRequested(again),
      t.ThreadClosed({ reason: 'gofer_deleted', goferId: D.goferId, accountId: D.accountId }),
    ];
    expect((await spec.when(...closing)).map((n) => n.type)).toEqual(['match_request']);
    const [after] = await rows('select * from read.threads where id = ?', [CD]);
    expect(after).toMatchObject({
      status: 'closed',
      closed_reason: 'gofer_deleted',
      closed_by_gofer_id: D.goferId,
    });
    const cards = await rows('select pairing_status from read.pairing_cards where thread_id = ?', [CD]);
    expect(cards).toEqual([{ pairing_status: 'closed' }, { pairing_status: 'closed' }]);
    const [cancelled] = await rows('select status from read.match_requests where id = ?', ['r-d']);
    expect(cancelled).toEqual({ status: 'cancelled' });
  });

  it('two sides of one account still get pair_proposed / match_decided apart by their discriminator', async () => {
    // The decider refuses such a pair (same account on both sides); the projection must not rely on it.
    const E: ThreadSide = { goferId: 'g-e', accountId: 'acc-same', name: 'E', sourcePlatform: 'dsh' };
    const F: ThreadSide = { goferId: 'g-f', accountId: 'acc-same', name: 'F', sourcePlatform: 'dsh' };
    const t = threadOf(`t-${randomUUID()}`, E, F);
    const notes = await spec.when(
      t.ThreadProposed({ score: 0.3 }),
      t.MatchRequestDecided({ requestId: 'r-ef', status: 'rejected', matchId: null, conversationId: null }),
    );
    expect(notes.map((n) => n.goferId)).toEqual([E.goferId, F.goferId, E.goferId, F.goferId]);
    // The projector names each notification by source event, recipient, type and discriminator.
    const names = notes.map((n, i) => `${i < 2 ? 0 : 1}:${n.recipient}:${n.type}:${n.discriminator}`);
    expect(new Set(names).size).toBe(4);
  });

  it('gives match_request a string counterpart name and platform even when the thread row is missing', async () => {
    const orphan = threadOf('thread-never-proposed', A, B).MatchRequested({ requestId: 'r-orphan' });
    const [note] = await spec.when(orphan);
    expect(note!.type).toBe('match_request');
    expect(note!.payload).toEqual({
      requestId: 'r-orphan',
      counterpartRoleName: expect.any(String) as string,
      counterpartSourcePlatform: 'other',
    });
  });
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
