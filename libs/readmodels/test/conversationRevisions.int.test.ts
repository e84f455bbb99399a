import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { conversationHistoryPage, type NotificationSpec } from '@oan/readmodels';
import { conversationsProjection } from '../src/conversations/index.ts';
import { relayedMessageOf, scrubbedRelayPayload } from '../src/conversations/notifications.ts';
import { conversationOf } from './support/conversations.ts';
import { at } from './support/events.ts';
import { projectionSpec } from './support/projectionSpec.ts';

/** Corrections and retractions in the conversations read model (docs/sealed-messages.md "Revisions"). */
const spec = projectionSpec(conversationsProjection, {
  rows: { messages: 'select * from read.conversation_messages order by conversation_id, change_sequence' },
});

const party = () => ({ accountId: `acc-${randomUUID()}`, goferId: `g-${randomUUID()}` });
const b64 = (n: number, fill: number) => Buffer.alloc(n, fill).toString('base64url');
const sealed = (fill: number) => ({
  alg: 'oan-sealed-v1' as const,
  ephemeralKey: b64(32, fill),
  nonce: b64(12, fill),
  ciphertext: b64(40, fill),
  recipients: [
    {
      accountId: 'acc-b',
      keyId: '6f7c1f7e-7c1a-4b55-9d0e-0a3c5e2b9f10',
      nonce: b64(12, fill),
      wrappedKey: b64(48, fill),
    },
  ],
});

/** A fresh conversation of A and B with A's message m1 ("Hi") sent and projected. */
async function withMessage() {
  const a = party();
  const b = party();
  const id = `conv-${randomUUID()}`;
  const c = conversationOf(id, a, b);
  await spec.given(c.ConversationOpened(), c.ConversationMessageSent());
  const page = () => spec.withEm((em) => conversationHistoryPage(em, id, 0n, 50));
  const row = async () =>
    (await spec.query('select * from read.conversation_messages where conversation_id = ?', [id]))[0]!;
  return { a, b, id, c, page, row, messageId: `${id}-m1` };
}

describe('when the sender corrects its message', () => {
  it('replaces the content, keeps id and changeSequence, and shows the revision in history', async () => {
    const m = await withMessage();
    expect((await m.page())[0]!.revision).toBeNull();
    const notes = await spec.when(
      m.c.ConversationMessageCorrected({ content: 'Hello', count: 1, correctedAt: at(5) }),
    );
    const [item] = await m.page();
    expect(item).toMatchObject({
      id: m.messageId,
      content: 'Hello',
      changeSequence: '1',
      createdAt: at(2),
      sealed: null,
      revision: { state: 'corrected', count: 1, at: at(5) },
    });
    expect(notes).toEqual([
      {
        recipient: m.b.accountId,
        type: 'relay_message',
        source: 'counterpart_party',
        conversationId: m.id,
        reply: `/conversations/${m.id}/messages`,
        payload: {
          messageId: `${m.id}-r1`,
          content: '[correction] Hello',
          createdAt: at(5),
          revision: { messageId: m.messageId, action: 'correct', count: 1 },
        },
        createdAt: at(5),
      },
    ]);
    // The wire's key order: what a v1 connector reads as text first, then the revision.
    expect(JSON.stringify(notes[0]!.payload)).toBe(
      JSON.stringify({
        messageId: `${m.id}-r1`,
        content: '[correction] Hello',
        createdAt: at(5),
        revision: { messageId: m.messageId, action: 'correct', count: 1 },
      }),
    );
  });

  it('never moves back to an earlier correction delivered again', async () => {
    const m = await withMessage();
    const first = m.c.ConversationMessageCorrected({ content: 'one', count: 1, correctedAt: at(5) });
    const second = m.c.ConversationMessageCorrected({
      content: 'two',
      count: 2,
      correctedAt: at(6),
      revisionId: 'r2',
    });
    await spec.when(first, second);
    const before = await m.row();
    await spec.when(first);
    expect(await m.row()).toEqual(before);
    expect(before).toMatchObject({ content: 'two', revision_count: 2 });
  });

  it('carries a sealed correction as sealed, without content, and keeps it in history', async () => {
    const m = await withMessage();
    const notes: NotificationSpec[] = await spec.when(
      m.c.ConversationMessageCorrected({ content: '', sealed: sealed(7), count: 1, correctedAt: at(5) }),
    );
    expect(JSON.stringify(notes[0]!.payload)).toBe(
      JSON.stringify({
        messageId: `${m.id}-r1`,
        sealed: sealed(7),
        createdAt: at(5),
        revision: { messageId: m.messageId, action: 'correct', count: 1 },
      }),
    );
    expect((await m.page())[0]).toMatchObject({ content: '', sealed: sealed(7) });
  });

  it('tells nobody when both sides are one account', async () => {
    const m = await withMessage();
    const self = m.c.ConversationMessageCorrected({ recipientAccountId: m.a.accountId });
    expect(await spec.when(self)).toEqual([]);
  });
});

describe('when the sender retracts its message', () => {
  it('empties it, takes it out of history and tells the other side in words a v1 connector shows', async () => {
    const m = await withMessage();
    await spec.when(
      m.c.ConversationMessageCorrected({ content: 'secret', sealed: null, count: 1, correctedAt: at(4) }),
    );
    const notes = await spec.when(m.c.ConversationMessageRetracted({ count: 1, retractedAt: at(9) }));
    expect(await m.page()).toEqual([]);
    expect(await m.row()).toMatchObject({
      content: '',
      sealed: null,
      revision_state: 'retracted',
      revision_count: 1,
    });
    expect(notes.map((n) => JSON.stringify(n.payload))).toEqual([
      JSON.stringify({
        messageId: `${m.id}-r2`,
        content: '[retracted] The other side withdrew a message.',
        createdAt: at(9),
        revision: { messageId: m.messageId, action: 'retract', count: 1 },
      }),
    ]);
    // A correction delivered after it (it cannot be decided after it) brings nothing back.
    await spec.when(m.c.ConversationMessageCorrected({ content: 'back?', count: 2, revisionId: 'late' }));
    expect(await m.row()).toMatchObject({ content: '', revision_state: 'retracted' });
  });
});

describe('what the projector scrubs of a retracted message', () => {
  it('knows which message a relay_message carries and which withdraws it', () => {
    expect(relayedMessageOf({ messageId: 'm1', content: 'x', createdAt: at(1) })).toEqual({
      messageId: 'm1',
      retracts: false,
    });
    expect(
      relayedMessageOf({ messageId: 'r1', content: 'x', revision: { messageId: 'm1', action: 'correct' } }),
    ).toEqual({ messageId: 'm1', retracts: false });
    expect(relayedMessageOf({ messageId: 'r2', revision: { messageId: 'm1', action: 'retract' } })).toEqual({
      messageId: 'm1',
      retracts: true,
    });
    expect(relayedMessageOf({ kind: 'other' })).toBeNull();
  });

  it('keeps ids, time and revision, and drops the text, the sealed content and the files', () => {
    const revision = { messageId: 'm1', action: 'correct', count: 2 };
    expect(
      JSON.stringify(
        scrubbedRelayPayload({
          messageId: 'm1',
          content: 'secret',
          createdAt: at(1),
          attachments: [{ a: 1 }],
        }),
      ),
    ).toBe(JSON.stringify({ messageId: 'm1', content: '', createdAt: at(1) }));
    expect(
      JSON.stringify(
        scrubbedRelayPayload({ messageId: 'r1', sealed: sealed(1), createdAt: at(2), revision }),
      ),
    ).toBe(JSON.stringify({ messageId: 'r1', content: '', createdAt: at(2), revision }));
  });
});
