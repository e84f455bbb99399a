import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ConversationEvent, MessageAttachment } from '@oan/domain';
import { readModelTables } from '@oan/projection';
import type { NotificationSpec } from '@oan/readmodels';
import { conversationHistoryPage, conversationsProjection } from '../src/conversations/index.ts';
import { conversationOf } from './support/conversations.ts';
import { type DataOf } from './support/events.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const spec = projectionSpec(conversationsProjection, {
  rows: {
    conversations: 'select * from read.conversations order by id',
    attachments: 'select * from read.conversation_attachments order by id',
    messages: 'select * from read.conversation_messages order by conversation_id, change_sequence',
  },
});

const suffix = randomBytes(3).toString('hex');
const A = { accountId: `acc-a-${suffix}`, goferId: `g-a-${suffix}` };
const B = { accountId: `acc-b-${suffix}`, goferId: `g-b-${suffix}` };
const CONV = `conv-${suffix}`;
const at = (s: number) => `2026-11-29T09:00:${String(s).padStart(2, '0')}.000Z`;
// Each event goes through its Avro schema and is keyed by the acting account (the builders do both).
const conversation = conversationOf(CONV, A, B);

const photo = {
  attachmentId: `a-photo-${suffix}`,
  kind: 'photo' as const,
  name: 'me.png',
  mimeType: 'image/png',
  size: 2048,
};
const doc = {
  attachmentId: `z-doc-${suffix}`,
  kind: 'document' as const,
  name: 'cv.pdf',
  mimeType: 'application/pdf',
};
type Upload = Partial<DataOf<ConversationEvent, 'ConversationAttachmentUploaded'>> & { attachmentId: string };
const uploaded = (by: string, a: Upload, s: number) =>
  conversation.ConversationAttachmentUploaded({
    conversationId: CONV,
    uploaderAccountId: by,
    width: null,
    height: null,
    storageKey: `conversations/${CONV}/${a.attachmentId}`,
    uploadedAt: at(s),
    ...a,
  });
const sent = (
  id: string,
  from: string,
  to: string,
  content: string,
  attachments: (Omit<MessageAttachment, 'width' | 'height'> & Partial<MessageAttachment>)[],
  seq: number,
) =>
  conversation.ConversationMessageSent({
    conversationId: CONV,
    messageId: id,
    senderAccountId: from,
    recipientAccountId: to,
    content,
    attachments: attachments.map((a) => ({ width: null, height: null, ...a })),
    changeSequence: seq,
    createdAt: at(10 + seq),
  });

const opened = conversation.ConversationOpened({
  conversationId: CONV,
  matchId: `m-${suffix}`,
  threadId: `t-${suffix}`,
  accountA: A.accountId,
  goferA: A.goferId,
  accountB: B.accountId,
  goferB: B.goferId,
  openedAt: at(1),
});
const uploads = [
  uploaded(A.accountId, { ...photo, width: 640, height: 480 }, 2),
  uploaded(A.accountId, { ...doc, size: 3 }, 3),
  uploaded(
    B.accountId,
    { attachmentId: `pb-${suffix}`, kind: 'photo' as const, name: 'b.jpg', mimeType: 'image/jpeg', size: 9 },
    4,
  ),
];
// The message lists the document before the photo: its order, not the upload order, is kept.
const withFiles = sent(
  `msg-1-${suffix}`,
  A.accountId,
  B.accountId,
  'my CV and me',
  [
    { ...doc, size: 3 },
    { ...photo, width: 640, height: 480 },
  ],
  1,
);
const textOnly = sent(`msg-2-${suffix}`, B.accountId, A.accountId, 'thanks!', [], 2);
const history = [opened, ...uploads, withFiles, textOnly];

const apply = (events: Parameters<typeof spec.when>) => spec.when(...events);
/** Rows with every `*_at` timestamp as ISO-8601, so expectations read like the events. */
const rows = async <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
  (await spec.query(q, params)).map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [
        k,
        k.endsWith('_at') && (typeof v === 'string' || v instanceof Date) ? new Date(v).toISOString() : v,
      ]),
    ),
  ) as T[];
const snapshot = async () => ({
  conversations: await rows('select * from read.conversations order by id'),
  attachments: await rows('select * from read.conversation_attachments order by id'),
  messages: await rows('select * from read.conversation_messages order by conversation_id, change_sequence'),
});
const attachment = async (id: string) =>
  (await rows('select * from read.conversation_attachments where id = ?', [id]))[0];

let notes: NotificationSpec[] = [];

describe('the conversations projection over an open conversation', () => {
  it('opens the conversation and records the uploads, notifying nobody', async () => {
    expect(await apply([opened, ...uploads])).toEqual([]);
    expect(await rows('select * from read.conversations')).toEqual([
      {
        id: CONV,
        match_id: `m-${suffix}`,
        thread_id: `t-${suffix}`,
        account_a: A.accountId,
        gofer_a: A.goferId,
        account_b: B.accountId,
        gofer_b: B.goferId,
        status: 'open',
        closed_reason: null,
        opened_at: at(1),
        closed_at: null,
      },
    ]);
    expect(await attachment(photo.attachmentId)).toEqual({
      id: photo.attachmentId,
      conversation_id: CONV,
      uploader_account_id: A.accountId,
      kind: 'photo',
      name: 'me.png',
      mime_type: 'image/png',
      size: '2048',
      width: 640,
      height: 480,
      storage_key: `conversations/${CONV}/${photo.attachmentId}`,
      message_id: null,
      created_at: at(2),
      deleted_at: null,
    });
    expect(await attachment(doc.attachmentId)).toMatchObject({ kind: 'document', width: null, height: null });
  });

  it('records each message and sends relay_message to the recipient only', async () => {
    notes = await apply([withFiles, textOnly]);
    expect(notes.map((n) => [n.recipient, n.type])).toEqual([
      [B.accountId, 'relay_message'],
      [A.accountId, 'relay_message'],
    ]);
    expect(await rows('select * from read.conversation_messages order by change_sequence')).toEqual([
      {
        id: `msg-1-${suffix}`,
        conversation_id: CONV,
        sender_account_id: A.accountId,
        recipient_account_id: B.accountId,
        content: 'my CV and me',
        attachment_ids: [doc.attachmentId, photo.attachmentId],
        change_sequence: '1',
        created_at: at(11),
        recalled_at: null,
        sealed: null,
        revision_state: null,
        revision_count: null,
        revised_at: null,
      },
      {
        id: `msg-2-${suffix}`,
        conversation_id: CONV,
        sender_account_id: B.accountId,
        recipient_account_id: A.accountId,
        content: 'thanks!',
        attachment_ids: [],
        change_sequence: '2',
        created_at: at(12),
        recalled_at: null,
        sealed: null,
        revision_state: null,
        revision_count: null,
        revised_at: null,
      },
    ]);
    const attached = await rows<{ id: string; message_id: string | null }>(
      'select id, message_id from read.conversation_attachments order by id',
    );
    expect(attached).toEqual([
      { id: photo.attachmentId, message_id: `msg-1-${suffix}` },
      { id: `pb-${suffix}`, message_id: null },
      { id: doc.attachmentId, message_id: `msg-1-${suffix}` },
    ]);
  });

  it('shapes relay_message: conversationId, reply, no goferId, attachments in message order', () => {
    const [toB] = notes;
    const payload = {
      messageId: `msg-1-${suffix}`,
      content: 'my CV and me',
      createdAt: at(11),
      attachments: [
        {
          attachmentId: doc.attachmentId,
          kind: 'document',
          name: 'cv.pdf',
          mimeType: 'application/pdf',
          size: 3,
        },
        {
          attachmentId: photo.attachmentId,
          kind: 'photo',
          name: 'me.png',
          mimeType: 'image/png',
          size: 2048,
          width: 640,
          height: 480,
        },
      ],
    };
    expect(toB).toEqual({
      recipient: B.accountId,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId: CONV,
      reply: `/conversations/${CONV}/messages`,
      payload,
      createdAt: at(11),
    });
    // The projector writes the payload as JSON.stringify gives it: the key order is the wire's.
    expect(JSON.stringify(toB!.payload)).toBe(JSON.stringify(payload));
  });

  it('omits attachments entirely (not []) from a text-only message', () => {
    const toA = notes[1]!;
    expect(toA.goferId).toBeUndefined();
    expect(toA).toEqual({
      recipient: A.accountId,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId: CONV,
      reply: `/conversations/${CONV}/messages`,
      payload: { messageId: `msg-2-${suffix}`, content: 'thanks!', createdAt: at(12) },
      createdAt: at(12),
    });
    expect(JSON.stringify(toA.payload)).toBe(
      JSON.stringify({ messageId: `msg-2-${suffix}`, content: 'thanks!', createdAt: at(12) }),
    );
  });

  it('never notifies the sender, even of a message addressed to itself', async () => {
    const self = sent(`msg-self-${suffix}`, A.accountId, A.accountId, 'note to self', [], 9);
    expect(await apply([self])).toEqual([]);
    expect(
      await rows('select id from read.conversation_messages where id = ?', [`msg-self-${suffix}`]),
    ).toEqual([{ id: `msg-self-${suffix}` }]);
    await rows('delete from read.conversation_messages where id = ?', [`msg-self-${suffix}`]);
  });

  it('applied twice, changes nothing and yields the same notification ids', async () => {
    const before = await snapshot();
    const again = await apply(history);
    // The same notifications: the projector derives the same envelope ids from them.
    expect(again).toEqual(notes);
    expect(await snapshot()).toEqual(before);
  });
});

const recalled = conversation.ConversationMessageRecalled({
  conversationId: CONV,
  messageId: `msg-1-${suffix}`,
  senderAccountId: A.accountId,
  recipientAccountId: B.accountId,
  changeSequence: 1,
  attachmentIds: [doc.attachmentId, photo.attachmentId],
  recalledAt: at(30),
});
const closed = conversation.ConversationClosed(
  {
    conversationId: CONV,
    reason: 'gofer_deleted',
    goferId: B.goferId,
    attachmentIds: [doc.attachmentId, photo.attachmentId, `pb-${suffix}`],
    closedAt: at(40),
  },
  { partitionKey: B.accountId },
);

describe('when a message is recalled and then the conversation is closed', () => {
  it('marks the message recalled, its content gone and its attachments deleted, notifying nobody', async () => {
    expect(await apply([recalled])).toEqual([]);
    const [m] = await rows(
      'select recalled_at, content, revision_state from read.conversation_messages where id = ?',
      [`msg-1-${suffix}`],
    );
    expect(m).toEqual({ recalled_at: at(30), content: '', revision_state: null });
    expect(await attachment(doc.attachmentId)).toMatchObject({ deleted_at: at(30) });
    expect(await attachment(photo.attachmentId)).toMatchObject({ deleted_at: at(30) });
    expect(await attachment(`pb-${suffix}`)).toMatchObject({ deleted_at: null });
    const [other] = await rows('select recalled_at from read.conversation_messages where id = ?', [
      `msg-2-${suffix}`,
    ]);
    expect(other).toEqual({ recalled_at: null });
  });

  it('closes it with its reason and deletes the rest, keeping earlier deletion times', async () => {
    expect(await apply([closed])).toEqual([]);
    const [c] = await rows('select status, closed_reason, closed_at from read.conversations where id = ?', [
      CONV,
    ]);
    expect(c).toEqual({ status: 'closed', closed_reason: 'gofer_deleted', closed_at: at(40) });
    expect(await attachment(`pb-${suffix}`)).toMatchObject({ deleted_at: at(40) });
    expect(await attachment(doc.attachmentId)).toMatchObject({ deleted_at: at(30) });
  });

  it('applied twice, changes nothing; a later second close does not move it either', async () => {
    const before = await snapshot();
    expect(await apply([...history, recalled, closed])).toEqual(notes);
    expect(await snapshot()).toEqual(before);
    const closedAgain = conversation.ConversationClosed({
      conversationId: CONV,
      reason: 'other_reason' as 'gofer_deleted',
      goferId: A.goferId,
      attachmentIds: [doc.attachmentId, photo.attachmentId, `pb-${suffix}`],
      closedAt: at(50),
    });
    expect(await apply([closedAgain])).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('an upload applied after the close (keyed by the other account) is born deleted', async () => {
    const late = uploaded(A.accountId, { ...doc, attachmentId: `late-${suffix}`, size: 1 }, 39);
    try {
      await apply([late]);
      expect(await attachment(`late-${suffix}`)).toMatchObject({ deleted_at: at(40) });
    } finally {
      await rows('delete from read.conversation_attachments where id = ?', [`late-${suffix}`]);
    }
  });

  it('is replay-ready: every conversations table is emptied by replay and rebuilt identically', async () => {
    const tables = await spec.withEm(readModelTables);
    for (const t of ['read.conversations', 'read.conversation_attachments', 'read.conversation_messages'])
      expect(tables).toContain(t);
    const before = await snapshot();
    await rows(`truncate ${tables.join(', ')}`);
    expect((await snapshot()).messages).toEqual([]);
    await apply([...history, recalled, closed]);
    expect(await snapshot()).toEqual(before);
  });
});

const party = () => ({ accountId: `acc-${randomUUID()}`, goferId: `g-${randomUUID()}` });

describe('a conversation of its own', () => {
  /** A fresh conversation per case: `given` applied first, then `event` twice. */
  const twice = (given: ConversationEvent['type'][], event: ConversationEvent['type']) => {
    const c = conversationOf(`conv-${randomUUID()}`, party(), party());
    return { given: () => given.map((type) => c[type]()), event: () => c[event]() };
  };
  const withPhoto = (given: ConversationEvent['type'][], event: ConversationEvent['type']) => {
    const c = conversationOf(`conv-${randomUUID()}`, party(), party());
    const photo = c.ConversationAttachmentUploaded();
    const { attachmentId, kind, name, mimeType, size, width, height } = photo.data;
    const attachments = [{ attachmentId, kind, name, mimeType, size, width, height }];
    const built = (type: ConversationEvent['type']) =>
      type === 'ConversationAttachmentUploaded'
        ? photo
        : type === 'ConversationMessageSent'
          ? c.ConversationMessageSent({ attachments })
          : type === 'ConversationMessageRecalled'
            ? c.ConversationMessageRecalled({ attachmentIds: [attachmentId] })
            : type === 'ConversationMessageRetracted'
              ? c.ConversationMessageRetracted({ attachmentIds: [attachmentId] })
              : type === 'ConversationClosed'
                ? c.ConversationClosed({ attachmentIds: [attachmentId] })
                : c[type]();
    return { given: () => given.map(built), event: () => built(event) };
  };
  spec.appliedTwice<ConversationEvent>({
    ConversationOpened: twice([], 'ConversationOpened'),
    ConversationAttachmentUploaded: twice(['ConversationOpened'], 'ConversationAttachmentUploaded'),
    ConversationMessageSent: withPhoto(
      ['ConversationOpened', 'ConversationAttachmentUploaded'],
      'ConversationMessageSent',
    ),
    ConversationMessageRecalled: withPhoto(
      ['ConversationOpened', 'ConversationAttachmentUploaded', 'ConversationMessageSent'],
      'ConversationMessageRecalled',
    ),
    ConversationMessageCorrected: twice(
      ['ConversationOpened', 'ConversationMessageSent'],
      'ConversationMessageCorrected',
    ),
    ConversationMessageRetracted: withPhoto(
      [
        'ConversationOpened',
        'ConversationAttachmentUploaded',
        'ConversationMessageSent',
        'ConversationMessageCorrected',
      ],
      'ConversationMessageRetracted',
    ),
    ConversationClosed: withPhoto(
      ['ConversationOpened', 'ConversationAttachmentUploaded'],
      'ConversationClosed',
    ),
    ConversationKeyChanged: twice(['ConversationOpened'], 'ConversationKeyChanged'),
  });
});

describe('a sealed message', () => {
  const a = party();
  const b = party();
  const c = conversationOf(`conv-${randomUUID()}`, a, b);
  const b64 = (n: number) => randomBytes(n).toString('base64url');
  const sealed = {
    alg: 'oan-sealed-v1' as const,
    ephemeralKey: b64(32),
    nonce: b64(12),
    ciphertext: b64(40),
    recipients: [{ accountId: b.accountId, keyId: randomUUID(), nonce: b64(12), wrappedKey: b64(48) }],
  };
  const message = c.ConversationMessageSent({ content: '', sealed });

  it('is stored with its envelope and relayed with sealed instead of content, in wire order', async () => {
    const [note, ...rest] = await apply([c.ConversationOpened(), message]);
    expect(rest).toEqual([]);
    const payload = { messageId: message.data.messageId, sealed, createdAt: message.data.createdAt };
    expect(note).toMatchObject({ recipient: b.accountId, type: 'relay_message', payload });
    expect(JSON.stringify(note!.payload)).toBe(JSON.stringify(payload));
    const [row] = await rows<{ content: string; sealed: unknown }>(
      'select content, sealed from read.conversation_messages where id = ?',
      [message.data.messageId],
    );
    expect(row).toEqual({ content: '', sealed });
  });

  it('is shown in the history with its envelope', async () => {
    const page = await spec.withEm((em) => conversationHistoryPage(em, message.data.conversationId, 0n, 10));
    expect(page.map((m) => [m.content, m.sealed])).toEqual([['', sealed]]);
  });
});

describe('a key change of one side', () => {
  it('tells the other side with a system_notice of kind conversation_key_changed', async () => {
    const a = party();
    const b = party();
    const c = conversationOf(`conv-${randomUUID()}`, a, b);
    const changed = c.ConversationKeyChanged({ change: 'retired' });
    expect(await apply([c.ConversationOpened(), changed])).toEqual([
      {
        recipient: a.accountId,
        type: 'system_notice',
        source: 'platform',
        payload: {
          kind: 'conversation_key_changed',
          conversationId: changed.data.conversationId,
          accountId: b.accountId,
          keyId: changed.data.keyId,
          fingerprint: changed.data.fingerprint,
          change: 'retired',
        },
        createdAt: changed.data.changedAt,
      },
    ]);
  });
});
