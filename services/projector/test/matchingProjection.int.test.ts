import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { envelopeSchema, type OanEventEnvelope } from '@oan/protocol';
import { threadKey, threadStreamId, type ThreadEvent, type ThreadSide } from '@oan/domain';
import { conversationIdFor, matchIdFor, threadIdFor } from '../../matching/src/domain/ids.ts';
import { scriptSession, summarizeSession } from '../../matching/src/domain/scriptedSession.ts';
import { threadDecider, type ThreadCommand } from '../../matching/src/domain/thread.ts';
import { A, B, NOW, hiring, seeker } from '../../matching/test/fixtures.ts';
import { journey } from '../../matching/test/journey.ts';
import { readModelTables } from '@oan/projection';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { projections, type DomainEvent } from '@oan/readmodels';
import { SUMMARY_PREVIEW_LENGTH } from '@oan/readmodels';
import { projectDomainEvents } from '../src/stages/domain.ts';
import { toEnvelope, type Notification } from '../src/notifications.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'projector', migrations });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const WEB = 'https://web.example';
const ctx = { webBaseUrl: `${WEB}/` };
let position = 0n;

/** The decider's events as the projector receives them off `matching.events` (keyed by side a). */
function asDomainEvents(events: ThreadEvent[]): DomainEvent[] {
  return events.map((e) => {
    const threadId = e.data.threadId;
    const a = 'a' in e.data ? e.data.a : A;
    return {
      eventId: randomUUID(),
      type: e.type,
      streamId: threadStreamId(threadId),
      accountId: threadKey({ a }),
      occurredAt: NOW,
      position: ++position,
      data: e.data as unknown as Record<string, unknown>,
    };
  });
}

/** A thread driven command by command through the matching domain's decider. */
function thread() {
  const events: ThreadEvent[] = [];
  return {
    events,
    run(command: ThreadCommand): ThreadEvent[] {
      const state = events.reduce(threadDecider.evolve, threadDecider.initialState());
      const out = threadDecider.decide({ ...command, metadata: { now: NOW } }, state);
      events.push(...out);
      return out;
    },
  };
}

const apply = (events: DomainEvent[]) =>
  orm.em.fork().transactional((em) => projectDomainEvents(em, events, projections, ctx));
const envelopes = (notes: Notification[]): OanEventEnvelope[] =>
  notes.map((n, i) => envelopeSchema.parse(toEnvelope(n, BigInt(i + 1))));
const rows = <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
  sql<T>(orm.em.fork(), q, params);
const snapshot = async () => ({
  threads: await rows('select * from read.threads order by id'),
  messages: await rows('select * from read.thread_messages order by thread_id, turn_index'),
  cards: await rows('select * from read.pairing_cards order by thread_id, gofer_id'),
  requests: await rows('select * from read.match_requests order by id'),
});

const THREAD = threadIdFor(A.goferId, B.goferId);
const { events: journeyEvents } = journey();
const history = asDomainEvents(journeyEvents);
const proposal = history.slice(0, 1);
const rest = history.slice(1);
let proposalNotes: OanEventEnvelope[] = [];
let restNotes: OanEventEnvelope[] = [];

describe('the matching projection over a whole confirm-mode thread', () => {
  it('has the journey the matching domain decides', () => {
    expect(journeyEvents.map((e) => e.type)).toEqual([
      'ThreadProposed',
      'PairingConfirmed',
      'PairingConfirmed',
      'ThreadActivated',
      ...Array<string>(6).fill('SessionTurnAdded'),
      'SessionEnded',
      'SummaryCardRecorded',
      'SummaryCardRecorded',
      'MatchRequested',
      'MatchRequestDecided',
    ]);
  });

  it('sends pair_proposed to each side once, with a reply, and opens two pending cards', async () => {
    proposalNotes = envelopes(await apply(proposal));
    expect(proposalNotes).toHaveLength(2);
    const [toA, toB] = proposalNotes;
    for (const [env, self, other] of [
      [toA, A, B],
      [toB, B, A],
    ] as const) {
      expect(env).toEqual({
        v: 1,
        seq: env!.seq,
        eventId: env!.eventId,
        type: 'pair_proposed',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        reply: { method: 'POST', path: `/api/v1/threads/${THREAD}/pair/confirm` },
        webUrl: `${WEB}/threads/${THREAD}`,
        payload: { counterpartRoleName: other.name, counterpartSourcePlatform: other.sourcePlatform },
        createdAt: NOW,
      });
    }
    const notes = await apply(proposal);
    expect(notes.map((n) => n.accountId)).toEqual([A.accountId, B.accountId]);

    const cards = await rows<Record<string, unknown>>('select * from read.pairing_cards order by gofer_id');
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
    const [t] = await rows<Record<string, unknown>>('select * from read.threads');
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
    restNotes = envelopes(await apply(rest));
    expect(restNotes.map((e) => `${e.type}:${e.goferId}`)).toEqual([
      `session_summary:${A.goferId}`,
      `session_summary:${B.goferId}`,
      `match_request:${B.goferId}`,
      `match_decided:${A.goferId}`,
      `match_decided:${B.goferId}`,
    ]);

    const s = await snapshot();
    expect(s.threads[0]).toMatchObject({
      status: 'session_ended',
      turn_count: 6,
      match_id: matchIdFor(THREAD),
      conversation_id: conversationIdFor(THREAD),
      closed_reason: null,
    });
    expect((s.threads[0] as { a_confirmed_at: Date | null }).a_confirmed_at).not.toBeNull();
    expect((s.threads[0] as { b_confirmed_at: Date | null }).b_confirmed_at).not.toBeNull();
    const turns = scriptSession(
      { goferId: A.goferId, profile: hiring },
      { goferId: B.goferId, profile: seeker },
    );
    expect(s.messages.map((m) => (m as { sender_gofer_id: string }).sender_gofer_id)).toEqual(
      turns.map((t) => t.senderGoferId),
    );
    expect(s.messages.map((m) => (m as { content: string }).content)).toEqual(turns.map((t) => t.content));
    expect(s.requests).toEqual([
      expect.objectContaining({
        id: 'r-a',
        thread_id: THREAD,
        requester_gofer_id: A.goferId,
        requester_account_id: A.accountId,
        recipient_gofer_id: B.goferId,
        recipient_account_id: B.accountId,
        status: 'accepted',
        decided_by: 'cross_request',
        match_id: matchIdFor(THREAD),
        conversation_id: conversationIdFor(THREAD),
      }),
    ]);

    const cardA = summarizeSession(
      turns,
      { goferId: A.goferId, profile: hiring },
      { goferId: B.goferId, profile: seeker },
    );
    const [rowA] = s.cards;
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
    expect((rowA!.summary_preview as string).length).toBeLessThanOrEqual(SUMMARY_PREVIEW_LENGTH);
    expect(cardA.summary.startsWith((rowA!.summary_preview as string).replace(/…$/, ''))).toBe(true);
    expect(rowA!.card_payload).toEqual(restNotes[0]!.payload);
  });

  it('shapes session_summary per §8.7: the whitelist, threadId twice, both arrays, no patchKind', () => {
    const turns = scriptSession(
      { goferId: A.goferId, profile: hiring },
      { goferId: B.goferId, profile: seeker },
    );
    for (const [env, self, other] of [
      [restNotes[0]!, A, B],
      [restNotes[1]!, B, A],
    ] as const) {
      const card = summarizeSession(
        turns,
        { goferId: self.goferId, profile: self === A ? hiring : seeker },
        { goferId: other.goferId, profile: other === A ? hiring : seeker },
      );
      expect(env).toEqual({
        v: 1,
        seq: env.seq,
        eventId: env.eventId,
        type: 'session_summary',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        webUrl: `${WEB}/threads/${THREAD}`,
        payload: {
          messageId: expect.any(String) as string,
          content: card.content,
          createdAt: NOW,
          kind: 'session_summary',
          summaryKey: `${THREAD}:${self.goferId}`,
          threadId: THREAD,
          cardTitle: card.cardTitle,
          summary: card.summary,
          opponentRoleName: card.opponentRoleName,
          otherPartyHighlights: card.otherPartyHighlights,
          actionItems: card.actionItems,
          matchRecommendation: card.matchRecommendation,
          pairReason: card.pairReason,
          photos: [{ attachmentId: `${other.goferId}-photo`, messageId: null, ownerRoleId: other.goferId }],
          documents: [],
        },
        createdAt: NOW,
      });
    }
  });

  it('sends match_request to the recipient and match_decided to both sides with its own goferId', () => {
    const [, , request, decidedA, decidedB] = restNotes;
    expect(request).toEqual({
      v: 1,
      seq: request!.seq,
      eventId: request!.eventId,
      type: 'match_request',
      source: 'platform',
      goferId: B.goferId,
      threadId: THREAD,
      reply: { method: 'POST', path: '/api/v1/match-requests/r-a/decision' },
      payload: { requestId: 'r-a', counterpartRoleName: A.name, counterpartSourcePlatform: A.sourcePlatform },
      createdAt: NOW,
    });
    for (const [env, self] of [
      [decidedA!, A],
      [decidedB!, B],
    ] as const) {
      expect(env).toEqual({
        v: 1,
        seq: env.seq,
        eventId: env.eventId,
        type: 'match_decided',
        source: 'platform',
        goferId: self.goferId,
        threadId: THREAD,
        conversationId: conversationIdFor(THREAD),
        payload: {
          requestId: 'r-a',
          status: 'accepted',
          matchId: matchIdFor(THREAD),
          conversationId: conversationIdFor(THREAD),
        },
        createdAt: NOW,
      });
    }
  });

  it('applied twice, changes nothing and yields the same notification ids', async () => {
    const before = await snapshot();
    const again = envelopes(await apply(history));
    expect(again.map((e) => e.eventId)).toEqual([...proposalNotes, ...restNotes].map((e) => e.eventId));
    expect(await snapshot()).toEqual(before);
    // A redelivered middle of the stream (after the end) moves nothing back either.
    await apply(history.slice(3, 12));
    expect(await snapshot()).toEqual(before);
  });

  it('is replay-ready: every matching table is emptied by replay and rebuilt identically', async () => {
    const tables = await readModelTables(orm.em.fork());
    for (const t of ['read.threads', 'read.thread_messages', 'read.pairing_cards', 'read.match_requests'])
      expect(tables).toContain(t);
    const before = await snapshot();
    await rows(`truncate ${tables.join(', ')}`);
    await apply(history);
    expect(await snapshot()).toEqual(before);
  });
});

describe('card regeneration, auto-pairing, rejections and closing', () => {
  const C: ThreadSide = { goferId: 'g-c', accountId: 'acc-c', name: 'Cleo', sourcePlatform: 'hermes' };
  const D: ThreadSide = { goferId: 'g-d', accountId: 'acc-d', name: 'Dan', sourcePlatform: 'other' };
  const CD = threadIdFor(C.goferId, D.goferId);

  it('a regenerated card yields a second session_summary with patchKind and replaces the card', async () => {
    const t = thread();
    t.events.push(...journeyEvents);
    const turns = scriptSession(
      { goferId: A.goferId, profile: hiring },
      { goferId: B.goferId, profile: seeker },
    );
    const regenerated = t.run({
      type: 'RecordSummaryCard',
      data: {
        goferId: A.goferId,
        card: summarizeSession(
          turns,
          { goferId: A.goferId, profile: hiring },
          { goferId: B.goferId, profile: seeker },
        ),
        photos: [{ attachmentId: `${B.goferId}-photo` }, { attachmentId: 'p2', width: 10, height: 20 }],
        documents: [{ attachmentId: 'doc1', name: 'cv.pdf', mimeType: 'application/pdf', size: 3 }],
        patchKind: 'edited',
      },
    });
    const [env] = envelopes(await apply(asDomainEvents(regenerated)));
    expect(env).toMatchObject({ type: 'session_summary', goferId: A.goferId, threadId: THREAD });
    expect(env!.payload).toMatchObject({
      patchKind: 'edited',
      threadId: THREAD,
      photos: [
        { attachmentId: `${B.goferId}-photo`, messageId: null, ownerRoleId: B.goferId },
        { attachmentId: 'p2', messageId: null, ownerRoleId: B.goferId, width: 10, height: 20 },
      ],
      documents: [
        {
          attachmentId: 'doc1',
          messageId: null,
          ownerRoleId: B.goferId,
          name: 'cv.pdf',
          mimeType: 'application/pdf',
          size: 3,
        },
      ],
    });
    const [card] = await rows<Record<string, unknown>>(
      'select * from read.pairing_cards where thread_id = ? and gofer_id = ?',
      [THREAD, A.goferId],
    );
    expect(card).toMatchObject({ card_version: 2, photo_count: 2, card_payload: env!.payload });
    // The first version redelivered after the second does not overwrite it.
    await apply(history.filter((e) => e.type === 'SummaryCardRecorded'));
    const [still] = await rows<Record<string, unknown>>(
      'select card_version from read.pairing_cards where thread_id = ? and gofer_id = ?',
      [THREAD, A.goferId],
    );
    expect(still).toEqual({ card_version: 2 });
  });

  it('an auto-pair sends pair_proposed without reply (A3); a rejected request gives null ids (A26)', async () => {
    const t = thread();
    t.run({ type: 'ProposePairing', data: { mode: 'auto', sides: [D, C], score: 0.5 } });
    t.run({ type: 'RequestMatch', data: { requestId: 'r-c', goferId: C.goferId, accountId: C.accountId } });
    t.run({ type: 'DecideMatchRequest', data: { requestId: 'r-c', accountId: D.accountId, accept: false } });
    const envs = envelopes(await apply(asDomainEvents(t.events)));
    expect(envs.map((e) => `${e.type}:${e.goferId}`)).toEqual([
      `pair_proposed:${C.goferId}`,
      `pair_proposed:${D.goferId}`,
      `match_request:${D.goferId}`,
      `match_decided:${C.goferId}`,
      `match_decided:${D.goferId}`,
    ]);
    for (const e of envs.slice(0, 2)) expect(e.reply).toBeUndefined();
    expect(envs[0]!.payload).toEqual({
      counterpartRoleName: D.name,
      counterpartSourcePlatform: D.sourcePlatform,
    });
    for (const e of envs.slice(3)) {
      expect(e.payload).toEqual({
        requestId: 'r-c',
        status: 'rejected',
        matchId: null,
        conversationId: null,
      });
      expect(e.conversationId).toBeUndefined();
    }
    const [th] = await rows<Record<string, unknown>>('select * from read.threads where id = ?', [CD]);
    expect(th).toMatchObject({ mode: 'auto', status: 'active', match_id: null, conversation_id: null });
    const [r] = await rows<Record<string, unknown>>('select * from read.match_requests where id = ?', [
      'r-c',
    ]);
    expect(r).toMatchObject({ status: 'rejected', decided_by: 'recipient', match_id: null });

    // A new request on the same thread, then a deleted Gofer closes it: the request is cancelled.
    t.run({ type: 'RequestMatch', data: { requestId: 'r-d', goferId: D.goferId, accountId: D.accountId } });
    const tail = t.run({ type: 'CloseForDeletedGofer', data: { goferId: D.goferId } });
    const closing = asDomainEvents([t.events.at(-2)!, ...tail]);
    expect(envelopes(await apply(closing)).map((e) => e.type)).toEqual(['match_request']);
    const [after] = await rows<Record<string, unknown>>('select * from read.threads where id = ?', [CD]);
    expect(after).toMatchObject({
      status: 'closed',
      closed_reason: 'gofer_deleted',
      closed_by_gofer_id: D.goferId,
    });
    const cards = await rows<{ pairing_status: string }>(
      'select pairing_status from read.pairing_cards where thread_id = ?',
      [CD],
    );
    expect(cards).toEqual([{ pairing_status: 'closed' }, { pairing_status: 'closed' }]);
    const [cancelled] = await rows<{ status: string }>(
      'select status from read.match_requests where id = ?',
      ['r-d'],
    );
    expect(cancelled).toEqual({ status: 'cancelled' });
  });

  it('two sides of one account would still get two distinct pair_proposed / match_decided ids', async () => {
    // The decider refuses such a pair (SAME_ACCOUNT); the projection must not rely on it.
    const E: ThreadSide = { goferId: 'g-e', accountId: 'acc-same', name: 'E', sourcePlatform: 'dsh' };
    const F: ThreadSide = { goferId: 'g-f', accountId: 'acc-same', name: 'F', sourcePlatform: 'dsh' };
    const EF = threadIdFor(E.goferId, F.goferId);
    const events: ThreadEvent[] = [
      {
        type: 'ThreadProposed',
        data: { threadId: EF, mode: 'confirm', a: E, b: F, score: 0.3, proposedAt: NOW },
      },
      {
        type: 'MatchRequestDecided',
        data: {
          threadId: EF,
          requestId: 'r-ef',
          requesterGoferId: E.goferId,
          requesterAccountId: E.accountId,
          recipientGoferId: F.goferId,
          recipientAccountId: F.accountId,
          status: 'rejected',
          decidedBy: 'recipient',
          matchId: null,
          conversationId: null,
          decidedAt: NOW,
        },
      },
    ];
    const notes = await apply(asDomainEvents(events));
    expect(notes.map((n) => n.goferId)).toEqual([E.goferId, F.goferId, E.goferId, F.goferId]);
    expect(new Set(notes.map((n) => n.eventId)).size).toBe(4);
  });

  it('gives match_request a string counterpart name and platform even when the thread row is missing (issue 12)', async () => {
    const requested = journeyEvents.find((e) => e.type === 'MatchRequested')!;
    const orphan = {
      ...requested,
      data: { ...requested.data, threadId: 'thread-never-proposed', requestId: 'r-orphan' },
    } as ThreadEvent;
    const [note] = envelopes(await apply(asDomainEvents([orphan])));
    expect(note!.type).toBe('match_request');
    expect(note!.payload).toEqual({
      requestId: 'r-orphan',
      counterpartRoleName: expect.any(String),
      counterpartSourcePlatform: 'other',
    });
  });
});
