import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { observeStatements } from '@oan/db';
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

describe("a batch's Gofers and role-chat turns written together", () => {
  const rows = {
    gofers: 'select * from read.gofers order by id',
    messages: 'select * from read.gofer_messages order by id',
    attachments: 'select * from read.gofer_attachments order by id',
  };
  const together = projectionSpec(gofersProjection, { rows });
  const oneByOne = projectionSpec(gofersProjection, { rows, holdInserts: false });

  it('leave the rows that one statement per event leaves, with one insert per table', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const [a, b, c] = ids.map((id) => gofersOf(randomUUID(), id));
    const turn = (g: typeof a, id: string, extra: Partial<DataOf<GoferEvent, 'ChatMessageAdded'>> = {}) =>
      g!.ChatMessageAdded({ messageId: id, createdAt: at(Number(id.replace(/\D/g, ''))), ...extra });
    const plain = [
      a!.GoferCreated(),
      b!.GoferCreated({ humanReviewTriggers: [], name: 'Ünïcödé "quoted" \\ name' }),
      turn(a, 'a1', { role: 'user', content: 'line one\nline "two" \\ {"not":"json"} 🎉' }),
      turn(b, 'b1', {
        kind: 'pairing',
        role: 'system',
        pairing:
          '{"threadId":"t1","self":{"roleId":"r1","name":"A"},"counterpart":{"roleId":"r2","name":"B"}}',
      }),
      turn(a, 'a2', {
        pendingQuery: true,
        responseConstraints: '{"format":"boolean"}',
        replyTo: 'a1',
        attachmentIds: ['att-1', 'att-2'],
      }),
      c!.GoferCreated(),
      turn(c, 'c1'),
    ];
    const redelivered = plain[2]!;
    // the same event twice in one batch, then statements between the inserts (an update, a delete
    // that must see the turns inserted before it, an attachment)
    const mixed = [
      ...plain,
      redelivered,
      b!.GoferProfileUpdated(),
      turn(b, 'b2'),
      b!.GoferDeleted(),
      a!.AttachmentAdded(),
      turn(a, 'a3', { kind: 'relay' }),
    ];

    const statements: string[] = [];
    const stop = observeStatements((st) => statements.push(st.sql));
    try {
      await together.when(...plain);
    } finally {
      stop();
    }
    expect(statements.filter((q) => /^insert into read\.gofers /.test(q))).toHaveLength(1);
    expect(statements.filter((q) => /^insert into read\.gofer_messages /.test(q))).toHaveLength(1);
    await together.when(...mixed);

    for (const e of [...plain, ...mixed]) await oneByOne.when(e);
    expect(await together.rows()).toEqual(await oneByOne.rows());
    const [q] = await together.query<{ response_constraints: unknown; pairing: unknown }>(
      'select response_constraints, pairing from read.gofer_messages where id = ?',
      ['a2'],
    );
    expect(q!.response_constraints).toEqual({ format: 'boolean' });
    expect(
      (await together.query('select * from read.gofer_messages where gofer_id = ?', [ids[1]])).length,
    ).toBe(0);
  });
});
