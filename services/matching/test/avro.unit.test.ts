import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { avroEventValidator, EventSchemaError, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { MATCHING_EVENT_TYPES, threadKey, threadStreamId, type ThreadEvent } from '@oan/domain';
import { conversationIdFor, matchIdFor, summaryMessageIdFor } from '../src/domain/ids.ts';
import { journey } from './journey.ts';
import {
  A,
  B,
  NOW,
  THREAD,
  activated,
  closed,
  confirmedBy,
  proposed,
  requested,
  sessionEnded,
} from './fixtures.ts';

const registry = new SchemaRegistry(SCHEMAS_DIR);
const { requestedAt: _, ...requestSides } = (
  requested('r1', A, B) as Extract<ThreadEvent, { type: 'MatchRequested' }>
).data;

/** One sample of every event type the domain emits, shaped as the deciders build them. */
const samples: ThreadEvent[] = [
  proposed('confirm'),
  proposed('auto'),
  confirmedBy(A),
  activated,
  closed('rejected', A),
  closed('gofer_deleted', B),
  {
    type: 'SessionTurnAdded',
    data: {
      threadId: THREAD,
      turnId: 't0',
      turnIndex: 0,
      senderGoferId: A.goferId,
      content: 'Hello',
      createdAt: NOW,
    },
  },
  sessionEnded(6),
  ...([null, 'edited'] as const).map((patchKind, i): ThreadEvent => ({
    type: 'SummaryCardRecorded',
    data: {
      threadId: THREAD,
      goferId: A.goferId,
      accountId: A.accountId,
      counterpartGoferId: B.goferId,
      messageId: summaryMessageIdFor(THREAD, A.goferId, i + 1),
      version: i + 1,
      patchKind,
      content: 'Lin: strong match',
      cardTitle: 'Lin: strong match',
      summary: 'Talked for 6 turns.',
      opponentRoleName: 'Lin',
      otherPartyHighlights: ['Offers: backend'],
      actionItems: [],
      matchRecommendation: 'strong',
      pairReason: 'They offer what you look for.',
      photos: JSON.stringify([{ attachmentId: 'p', messageId: null, ownerRoleId: B.goferId }]),
      documents: '[]',
      generatedAt: NOW,
    },
  })),
  requested('r1', A, B),
  ...(['accepted', 'rejected'] as const).map((status): ThreadEvent => ({
    type: 'MatchRequestDecided',
    data: {
      ...requestSides,
      status,
      decidedBy: 'recipient',
      matchId: status === 'accepted' ? matchIdFor(THREAD) : null,
      conversationId: status === 'accepted' ? conversationIdFor(THREAD) : null,
      decidedAt: NOW,
    },
  })),
];

describe('schemas/matching', () => {
  it('holds one parseable v1 record per event type, named after it, in namespace oan.matching', () => {
    const files = readdirSync(join(SCHEMAS_DIR, 'matching')).filter((f) => f.endsWith('.avsc'));
    expect(files.sort()).toEqual(MATCHING_EVENT_TYPES.map((t) => `${t}.v1.avsc`).sort());
    for (const t of MATCHING_EVENT_TYPES) expect(registry.schema(t, 1).avro.name).toBe(`oan.matching.${t}`);
  });

  it('covers every event type with a sample', () => {
    expect(new Set(samples.map((s) => s.type))).toEqual(new Set(MATCHING_EVENT_TYPES));
  });

  it.each(samples.map((s) => [s.type, s] as const))(
    'validates a sample %s and round-trips it',
    (name, sample) => {
      expect(() => avroEventValidator(registry).assertValid(name, 1, sample.data)).not.toThrow();
      const type = registry.schema(name, 1).avro;
      expect(type.fromBuffer(type.toBuffer(sample.data))).toEqual(sample.data);
    },
  );

  it('refuses private or undeclared data in a proposal snapshot', () => {
    const leaky = { ...proposed().data, a: { ...A, email: 'a@example.com' } };
    expect(() => avroEventValidator(registry).assertValid('ThreadProposed', 1, leaky)).toThrow(
      EventSchemaError,
    );
  });
});

describe('a whole thread decided command by command', () => {
  it('emits only events its schemas accept, and folds to a matched thread', () => {
    const { events, state } = journey();
    for (const e of events)
      expect(() => avroEventValidator(registry).assertValid(e.type, 1, e.data)).not.toThrow();
    expect(new Set(events.map((e) => e.type))).toEqual(
      new Set(MATCHING_EVENT_TYPES.filter((t) => t !== 'ThreadClosed')),
    );
    expect(state).toMatchObject({ status: 'session_ended', match: { matchId: matchIdFor(THREAD) } });
  });

  it('keys the whole stream by one account, so it stays in one partition', () => {
    const { state } = journey();
    if (state.status === 'none') throw new Error('no thread');
    expect(threadKey(state)).toBe(A.accountId);
    expect(threadStreamId(state.threadId)).toBe(`thread-${THREAD}`);
  });

  it('is deterministic: the same commands give the same events', () => {
    expect(journey().events).toEqual(journey().events);
  });
});
