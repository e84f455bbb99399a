import { conversationStreamId, type ConversationEvent } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

interface Party {
  accountId: string;
  goferId: string;
}

/**
 * The conversations context's events of one conversation between `a` and `b`; keyed by the acting
 * account, as the conversations service keys them (by default `a` writes).
 */
export function conversationOf(conversationId: string, a: Party, b: Party) {
  return eventBuilders<ConversationEvent>(
    {
      ConversationOpened: () => ({
        conversationId,
        matchId: `m-${conversationId}`,
        threadId: `t-${conversationId}`,
        accountA: a.accountId,
        goferA: a.goferId,
        accountB: b.accountId,
        goferB: b.goferId,
        openedAt: at(0),
      }),
      ConversationAttachmentUploaded: () => ({
        conversationId,
        uploaderAccountId: a.accountId,
        attachmentId: `${conversationId}-photo`,
        kind: 'photo',
        name: 'me.png',
        mimeType: 'image/png',
        size: 2048,
        width: null,
        height: null,
        storageKey: `conversations/${conversationId}/photo`,
        uploadedAt: at(1),
      }),
      ConversationMessageSent: () => ({
        conversationId,
        messageId: `${conversationId}-m1`,
        senderAccountId: a.accountId,
        recipientAccountId: b.accountId,
        content: 'Hi',
        attachments: [],
        changeSequence: 1,
        createdAt: at(2),
        sealed: null,
        clientMessageId: null,
      }),
      ConversationMessageRecalled: () => ({
        conversationId,
        messageId: `${conversationId}-m1`,
        senderAccountId: a.accountId,
        recipientAccountId: b.accountId,
        changeSequence: 1,
        attachmentIds: [],
        recalledAt: at(3),
      }),
      ConversationMessageCorrected: () => ({
        conversationId,
        messageId: `${conversationId}-m1`,
        revisionId: `${conversationId}-r1`,
        senderAccountId: a.accountId,
        recipientAccountId: b.accountId,
        clientMessageId: 'c-1',
        changeSequence: 1,
        content: 'Hi, corrected',
        sealed: null,
        count: 1,
        correctedAt: at(3),
      }),
      ConversationMessageRetracted: () => ({
        conversationId,
        messageId: `${conversationId}-m1`,
        revisionId: `${conversationId}-r2`,
        senderAccountId: a.accountId,
        recipientAccountId: b.accountId,
        clientMessageId: 'c-2',
        changeSequence: 1,
        count: 0,
        attachmentIds: [],
        retractedAt: at(3),
      }),
      ConversationClosed: () => ({
        conversationId,
        reason: 'gofer_deleted',
        goferId: b.goferId,
        attachmentIds: [],
        closedAt: at(4),
      }),
      ConversationKeyChanged: () => ({
        conversationId,
        accountId: b.accountId,
        recipientAccountId: a.accountId,
        keyId: '4f0c2d7e-1b9a-4c3e-8d5f-6a7b8c9d0e1f',
        fingerprint: '3f1a 09c2 0000 1111 2222 3333 4444 5555 6666 7777',
        change: 'published',
        changedAt: at(5),
      }),
    },
    ({ type, data }) => ({
      streamId: conversationStreamId(data.conversationId),
      partitionKey:
        type === 'ConversationAttachmentUploaded'
          ? data.uploaderAccountId
          : type === 'ConversationMessageSent' ||
              type === 'ConversationMessageRecalled' ||
              type === 'ConversationMessageCorrected' ||
              type === 'ConversationMessageRetracted'
            ? data.senderAccountId
            : type === 'ConversationKeyChanged'
              ? data.accountId
              : a.accountId,
    }),
  );
}
