import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GoferEvent } from '@oan/domain';
import { gofersProjection } from '../src/gofers/index.ts';
import { at, type DataOf } from './support/events.ts';
import { gofersOf } from './support/gofers.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const spec = projectionSpec(gofersProjection, {
  rows: {
    gofers: 'select * from read.gofers order by id',
    messages: 'select * from read.gofer_messages order by id',
    attachments: 'select * from read.gofer_attachments order by id',
  },
});

const accountId = randomUUID();
const goferId = randomUUID();
const gofer = gofersOf(accountId, goferId);
const msg = (
  id: string,
  role: 'user' | 'assistant',
  content: string,
  extra: Partial<DataOf<GoferEvent, 'ChatMessageAdded'>> = {},
) => gofer.ChatMessageAdded({ messageId: id, role, content, createdAt: at(Number(id.slice(1))), ...extra });

const history = [
  gofer.GoferCreated(),
  msg('m1', 'assistant', 'Hello!'),
  msg('m2', 'user', 'I want a backend engineer'),
  msg('m3', 'assistant', 'Shall I start?', {
    pendingQuery: true,
    responseConstraints: '{"format":"boolean"}',
    replyTo: 'm2',
  }),
  gofer.GoferProfileUpdated(),
  gofer.GoferDiscoveryStatusChanged(),
];

describe('the gofers projection', () => {
  it('turns assistant turns into gofer_message / gofer_question and never echoes the owner', async () => {
    const notes = await spec.given(...history);
    expect(notes.map((n) => n.type)).toEqual(['gofer_message', 'gofer_question']);
    expect(notes[1]).toEqual({
      recipient: accountId,
      type: 'gofer_question',
      source: 'own_gofer',
      goferId,
      chatId: 'chat-1',
      reply: `/gofers/${goferId}/chat/messages`,
      responseConstraints: { format: 'boolean' },
      payload: { messageId: 'm3', content: 'Shall I start?', createdAt: at(3) },
      createdAt: at(3),
    });
    expect(notes[0]!.responseConstraints).toBeUndefined();
    const [g] = await spec.query('select * from read.gofers where id = ?', [goferId]);
    expect(g).toMatchObject({
      name: 'Hiring Gofer',
      discovery_status: 'ready_for_pairing',
      source_platform: 'dsh',
    });
  });

  it('applied twice, changes nothing and yields the same notifications', async () => {
    const before = await spec.rows();
    const again = await spec.when(...history);
    expect(again).toEqual(await spec.when(...history));
    expect(await spec.rows()).toEqual(before);
  });

  it('a deleted Gofer loses its chat and keeps a tombstone', async () => {
    await spec.when(gofer.GoferDeleted());
    const messages = await spec.query('select * from read.gofer_messages where gofer_id = ?', [goferId]);
    expect(messages).toEqual([]);
    const [g] = await spec.query<{ deleted_at: string }>('select deleted_at from read.gofers where id = ?', [
      goferId,
    ]);
    expect(new Date(g!.deleted_at).toISOString()).toBe(at(9));
  });
});

describe("a stranger's turn in the role-chat", () => {
  it('reaches the owner as a gofer_message that says which door it came through', async () => {
    const g = gofersOf(randomUUID(), randomUUID());
    const turn = (kind: string, id: string) =>
      g.ChatMessageAdded({ messageId: id, role: 'assistant', content: `a ${kind} turn`, kind });
    const notes = await spec.given(g.GoferCreated(), turn('relay', 'r1'), turn('a2a', 'a1'));
    expect(notes.map((n) => [n.type, n.source, n.payload.kind])).toEqual([
      ['gofer_message', 'own_gofer', 'relay_turn'],
      ['gofer_message', 'own_gofer', 'a2a_turn'],
    ]);
  });
});

describe('a Gofer of its own', () => {
  /** A fresh Gofer per case: `given` applied first, then `event` twice. */
  const twice = (given: GoferEvent['type'][], event: GoferEvent['type']) => {
    const g = gofersOf(randomUUID(), randomUUID());
    return { given: () => given.map((type) => g[type]()), event: () => g[event]() };
  };
  spec.appliedTwice<GoferEvent>({
    GoferCreated: twice([], 'GoferCreated'),
    ChatMessageAdded: twice(['GoferCreated'], 'ChatMessageAdded'),
    GoferProfileUpdated: twice(['GoferCreated'], 'GoferProfileUpdated'),
    GoferDiscoveryStatusChanged: twice(['GoferCreated'], 'GoferDiscoveryStatusChanged'),
    GoferDeleted: twice(['GoferCreated', 'ChatMessageAdded', 'AttachmentAdded'], 'GoferDeleted'),
    AttachmentAdded: twice(['GoferCreated'], 'AttachmentAdded'),
    AttachmentRagStatusChanged: twice(['GoferCreated', 'AttachmentAdded'], 'AttachmentRagStatusChanged'),
    GoferRelayPublished: twice(['GoferCreated'], 'GoferRelayPublished'),
    GoferRelayUnpublished: twice(['GoferCreated'], 'GoferRelayUnpublished'),
    GoferA2APublished: twice(['GoferCreated'], 'GoferA2APublished'),
    GoferA2AUnpublished: twice(['GoferCreated'], 'GoferA2AUnpublished'),
    CallerQuestionAsked: twice(['GoferCreated'], 'CallerQuestionAsked'),
    CallerQuestionAnswered: twice(['GoferCreated', 'CallerQuestionAsked'], 'CallerQuestionAnswered'),
    CallerQuestionWithdrawn: twice(['GoferCreated', 'CallerQuestionAsked'], 'CallerQuestionWithdrawn'),
  });
});

describe("a caller's question for the owner", () => {
  const g = gofersOf(randomUUID(), randomUUID());
  const ask = () => [
    g.GoferCreated(),
    g.CallerQuestionAsked(),
    g.ChatMessageAdded({
      messageId: 'q1',
      content: 'A stranger asked me something only you can answer.',
      kind: 'caller_question',
      pendingQuery: true,
      responseConstraints: '{"format":"freestyle"}',
      createdAt: at(2),
    }),
  ];

  it("is a gofer_question to the owner whose payload names its kind, and nothing of the link's", async () => {
    const notes = await spec.given(...ask());
    expect(notes).toEqual([
      expect.objectContaining({
        type: 'gofer_question',
        source: 'own_gofer',
        goferId: g.GoferCreated().data.goferId,
        responseConstraints: { format: 'freestyle' },
        payload: {
          messageId: 'q1',
          content: 'A stranger asked me something only you can answer.',
          createdAt: at(2),
          kind: 'caller_question',
        },
      }),
    ]);
  });

  it('applied twice, changes nothing and yields the same notifications', async () => {
    const before = await spec.rows();
    const again = await spec.when(...ask());
    expect(again).toEqual(await spec.when(...ask()));
    expect(await spec.rows()).toEqual(before);
  });
});
