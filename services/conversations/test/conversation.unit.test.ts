import { describe, expect, it } from 'vitest';
import type { ConversationEvent, ConversationMessageSent, MessageAttachment } from '@oan/domain';
import { deciderSpec } from '@oan/testing';
import {
  conversationDecider,
  type ConversationCommand,
  type SendMessage,
} from '../src/domain/conversation.ts';
import {
  indexChangesOf,
  type ConversationState,
  type StoredAttachment,
  type StoredMessage,
} from '../src/domain/conversationState.ts';

const NOW = '2026-11-29T08:00:00.000Z';
const CONV = 'conv-1';
const A = { accountId: 'acc-a', goferId: 'g-a' };
const B = { accountId: 'acc-b', goferId: 'g-b' };
const STRANGER = 'acc-x';

/** given(events).when(command).then(events) | .thenThrows(code), at NOW. */
const given = deciderSpec(expect, {
  ...conversationDecider,
  decide: (command: ConversationCommand, state: ConversationState) =>
    conversationDecider.decide({ ...command, metadata: { now: NOW } }, state),
});

const openedData = {
  conversationId: CONV,
  matchId: 'match-1',
  threadId: 'thread-1',
  accountA: A.accountId,
  goferA: A.goferId,
  accountB: B.accountId,
  goferB: B.goferId,
  openedAt: '2026-11-29T07:00:00.000Z',
};
const opened: ConversationEvent = { type: 'ConversationOpened', data: openedData };

const photo: MessageAttachment = {
  attachmentId: 'att-1',
  kind: 'photo',
  name: 'a.png',
  mimeType: 'image/png',
  size: 10,
  width: 2,
  height: 3,
};
const uploaded = (by = A.accountId, a = photo): ConversationEvent => ({
  type: 'ConversationAttachmentUploaded',
  data: {
    conversationId: CONV,
    uploaderAccountId: by,
    storageKey: `conversations/${CONV}/${a.attachmentId}`,
    ...a,
    uploadedAt: NOW,
  },
});
/** The index row of an uploaded file, as the send decision gets it. */
const stored = (over: Partial<StoredAttachment> = {}): StoredAttachment => ({
  ...photo,
  uploaderAccountId: A.accountId,
  messageId: null,
  deleted: false,
  ...over,
});

const sent = (
  changeSequence: number,
  from = A,
  to = B,
  over: Partial<
    Pick<ConversationMessageSent, 'messageId' | 'content' | 'attachments' | 'sealed' | 'clientMessageId'>
  > = {},
): ConversationEvent => ({
  type: 'ConversationMessageSent',
  data: {
    conversationId: CONV,
    messageId: over.messageId ?? `m${changeSequence}`,
    senderAccountId: from.accountId,
    recipientAccountId: to.accountId,
    content: over.content ?? 'hello',
    attachments: over.attachments ?? [],
    changeSequence,
    createdAt: NOW,
    sealed: over.sealed ?? null,
    clientMessageId: over.clientMessageId ?? null,
  },
});
/** A's message m1 (changeSequence 1, to B) recalled, with the files it had. */
const recalled = (attachmentIds: string[] = []): ConversationEvent => ({
  type: 'ConversationMessageRecalled',
  data: {
    conversationId: CONV,
    messageId: 'm1',
    senderAccountId: A.accountId,
    recipientAccountId: B.accountId,
    changeSequence: 1,
    attachmentIds,
    recalledAt: NOW,
  },
});

const closed = (goferId = B.goferId, attachmentIds: string[] = []): ConversationEvent => ({
  type: 'ConversationClosed',
  data: { conversationId: CONV, reason: 'gofer_deleted', goferId, attachmentIds, closedAt: NOW },
});

const send = (
  accountId: string,
  over: Partial<Omit<SendMessage, 'accountId'>> = {},
): ConversationCommand => ({
  type: 'SendMessage',
  data: {
    accountId,
    messageId: 'm-new',
    content: 'hello',
    attachments: [],
    keys: [],
    previous: null,
    ...over,
  },
});
const message = (over: Partial<StoredMessage> = {}): StoredMessage => ({
  id: 'm1',
  senderAccountId: A.accountId,
  changeSequence: 1,
  recalled: false,
  attachmentIds: [],
  createdAt: NOW,
  corrections: 0,
  sealed: false,
  ...over,
});
/** DELETE …/messages/m1: a retraction without a clientMessageId (src/domain/revisions.ts). */
const recall = (
  accountId: string,
  m: StoredMessage | null,
  files: StoredAttachment[] = [],
): ConversationCommand => ({
  type: 'ReviseMessage',
  data: {
    accountId,
    messageId: 'm1',
    revisionId: 'r1',
    clientMessageId: null,
    action: 'retract',
    message: m,
    prior: null,
    attachments: files,
    usedElsewhere: [],
    keys: [],
  },
});
const retracted = (attachmentIds: string[] = []): ConversationEvent => ({
  type: 'ConversationMessageRetracted',
  data: {
    conversationId: CONV,
    messageId: 'm1',
    revisionId: 'r1',
    senderAccountId: A.accountId,
    recipientAccountId: B.accountId,
    clientMessageId: null,
    changeSequence: 1,
    count: 0,
    attachmentIds,
    retractedAt: NOW,
  },
});
const upload = (accountId: string): ConversationCommand => ({
  type: 'UploadAttachment',
  data: { ...photo, accountId, storageKey: `conversations/${CONV}/${photo.attachmentId}` },
});
const open = (deletedGoferId: string | null = null): ConversationCommand => ({
  type: 'OpenConversation',
  data: { opened: openedData, deletedGoferId },
});
const closeFor = (goferId: string, attachmentIds: string[] = []): ConversationCommand => ({
  type: 'CloseForDeletedGofer',
  data: { goferId, attachmentIds },
});

describe('when the conversation is not opened yet', () => {
  it('opens it once, as the accepted match says', () => {
    given().when(open()).then(opened);
  });

  it('opens it closed at once when one of its Gofers is deleted already', () => {
    given().when(open(B.goferId)).then(opened, closed(B.goferId));
  });

  it('refuses every participant command with the one probe-safe 403', () => {
    given().when(send(A.accountId)).thenThrows('CONVERSATION_FORBIDDEN');
    given().when(upload(A.accountId)).thenThrows('CONVERSATION_FORBIDDEN');
    given().when(recall(A.accountId, null)).thenThrows('CONVERSATION_FORBIDDEN');
  });

  it('has nothing to close', () => {
    given().when(closeFor(A.goferId)).thenNothing();
  });
});

describe('when the conversation is open', () => {
  it('opens nothing twice (a redelivery, or a route racing the opener)', () => {
    given(opened).when(open()).thenNothing();
  });

  it('gives a message the next changeSequence, counting both sides', () => {
    given(opened)
      .when(send(A.accountId))
      .then(sent(1, A, B, { messageId: 'm-new' }));
    given(opened, sent(1, A, B), sent(2, B, A))
      .when(send(B.accountId, { content: 'and you?' }))
      .then(sent(3, B, A, { messageId: 'm-new', content: 'and you?' }));
  });

  it('keeps a recalled message’s changeSequence taken', () => {
    given(opened, sent(1), recalled())
      .when(send(A.accountId))
      .then(sent(2, A, B, { messageId: 'm-new' }));
  });

  it('refuses a third account with the same 403 as an unknown conversation', () => {
    given(opened).when(send(STRANGER)).thenThrows('CONVERSATION_FORBIDDEN');
    given(opened).when(upload(STRANGER)).thenThrows('CONVERSATION_FORBIDDEN');
    given(opened, sent(1)).when(recall(STRANGER, message())).thenThrows('CONVERSATION_FORBIDDEN');
  });

  it('refuses a blank, over-long or over-full message', () => {
    given(opened)
      .when(send(A.accountId, { content: '  ' }))
      .thenThrows('MESSAGE_EMPTY');
    given(opened)
      .when(send(A.accountId, { content: 'x'.repeat(20_001) }))
      .thenThrows('MESSAGE_TOO_LONG');
    const ids = Array.from({ length: 11 }, (_, i) => `att-${i}`);
    given(opened)
      .when(send(A.accountId, { attachmentIds: ids }))
      .thenThrows('TOO_MANY_ATTACHMENTS');
    given(opened)
      .when(send(A.accountId, { attachmentIds: ['att-1', 'att-1'] }))
      .thenThrows('DUPLICATE_ATTACHMENT');
  });

  it('records a participant’s upload', () => {
    given(opened).when(upload(B.accountId)).then(uploaded(B.accountId));
  });

  it('attaches the caller’s own unused file, with its frozen metadata; an attachment-only message has ""', () => {
    given(opened, uploaded())
      .when(send(A.accountId, { content: undefined, attachmentIds: ['att-1'], attachments: [stored()] }))
      .then(sent(1, A, B, { messageId: 'm-new', content: '', attachments: [photo] }));
  });

  it('refuses a file that is unknown here, the other side’s, deleted or already sent, with one refusal', () => {
    for (const attachments of [
      [],
      [stored({ uploaderAccountId: B.accountId })],
      [stored({ deleted: true })],
      [stored({ messageId: 'm0' })],
    ]) {
      given(opened, uploaded())
        .when(send(A.accountId, { attachmentIds: ['att-1'], attachments }))
        .thenThrows('ATTACHMENT_UNUSABLE');
    }
  });

  it('lets the sender alone recall a message, once: a retraction', () => {
    const withFile = message({ attachmentIds: ['att-1'] });
    given(opened, sent(1))
      .when(recall(A.accountId, withFile, [stored({ messageId: 'm1' })]))
      .then(retracted(['att-1']));
    given(opened, sent(1)).when(recall(B.accountId, message())).thenThrows('MESSAGE_NOT_YOURS');
    given(opened, sent(1))
      .when(recall(A.accountId, message({ recalled: true })))
      .thenThrows('MESSAGE_NOT_FOUND');
    given(opened).when(recall(A.accountId, null)).thenThrows('MESSAGE_NOT_FOUND');
  });

  it('closes with its stored files when one of its Gofers is deleted; another Gofer closes nothing', () => {
    given(opened, uploaded())
      .when(closeFor(A.goferId, ['att-1']))
      .then(closed(A.goferId, ['att-1']));
    given(opened).when(closeFor('g-other')).thenNothing();
  });
});

describe('when the conversation is closed', () => {
  it('refuses every participant command with the one probe-safe 403', () => {
    given(opened, closed()).when(send(A.accountId)).thenThrows('CONVERSATION_FORBIDDEN');
    given(opened, closed()).when(upload(B.accountId)).thenThrows('CONVERSATION_FORBIDDEN');
    given(opened, sent(1), closed())
      .when(recall(A.accountId, message()))
      .thenThrows('CONVERSATION_FORBIDDEN');
  });

  it('closes nothing again and opens nothing (a redelivered GoferDeleted or decision)', () => {
    given(opened, closed()).when(closeFor(B.goferId)).thenNothing();
    given(opened, closed()).when(open()).thenNothing();
  });
});

describe('the write-side index', () => {
  it('stores an upload unsent, a message with its files, and marks recalls and closes', () => {
    const {
      uploadedAt: _at,
      conversationId: _c,
      ...file
    } = (uploaded() as Extract<ConversationEvent, { type: 'ConversationAttachmentUploaded' }>).data;
    expect(indexChangesOf(opened)).toEqual([]);
    expect(indexChangesOf(uploaded())).toEqual([
      {
        type: 'attachment_stored',
        conversationId: CONV,
        attachment: { ...file, messageId: null, deleted: false },
      },
    ]);
    expect(indexChangesOf(sent(1, A, B, { attachments: [photo], clientMessageId: 'c-1' }))).toEqual([
      {
        type: 'message_stored',
        conversationId: CONV,
        message: message({ attachmentIds: ['att-1'] }),
        clientMessageId: 'c-1',
      },
      { type: 'attachments_used', conversationId: CONV, messageId: 'm1', attachmentIds: ['att-1'] },
    ]);
    expect(indexChangesOf(sent(2))).toEqual([
      {
        type: 'message_stored',
        conversationId: CONV,
        message: message({ id: 'm2', changeSequence: 2 }),
        clientMessageId: null,
      },
    ]);
    expect(indexChangesOf(closed(A.goferId, ['att-1']))).toEqual([
      { type: 'attachments_deleted', conversationId: CONV, attachmentIds: ['att-1'] },
    ]);
  });
});
