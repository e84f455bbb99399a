import type { ChatMessageAdded, GoferEvent } from '@oan/domain';

/** A role-chat message with the defaults of a plain turn: nothing attached, no pairing, not pending. */
export const chatMessage = (
  ids: Pick<ChatMessageAdded, 'goferId' | 'accountId' | 'chatId'>,
  m: Pick<ChatMessageAdded, 'messageId' | 'role' | 'content' | 'createdAt'> & Partial<ChatMessageAdded>,
): GoferEvent => ({
  type: 'ChatMessageAdded',
  data: {
    ...ids,
    attachmentIds: [],
    kind: null,
    pairing: null,
    pendingQuery: false,
    responseConstraints: null,
    replyTo: null,
    ...m,
  },
});
