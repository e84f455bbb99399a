/** The conversations context's domain events (schemas/conversations/*.avsc, version 1). */
import type { AttachmentKind } from './common.ts';

/** The protocol's `OanConversationAttachment` as the events carry it (width/height: photos only, else null). */
export interface MessageAttachment {
  attachmentId: string;
  kind: AttachmentKind;
  name: string;
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
}

export interface ConversationOpened {
  conversationId: string;
  matchId: string;
  threadId: string;
  /** Side a is the match request's requester, side b its recipient. */
  accountA: string;
  goferA: string;
  accountB: string;
  goferB: string;
  openedAt: string;
}

export interface ConversationAttachmentUploaded extends MessageAttachment {
  conversationId: string;
  uploaderAccountId: string;
  storageKey: string;
  uploadedAt: string;
}

export interface ConversationMessageSent {
  conversationId: string;
  messageId: string;
  senderAccountId: string;
  recipientAccountId: string;
  content: string;
  attachments: MessageAttachment[];
  /** Dense per conversation from 1, decided under the conversation's lock. */
  changeSequence: number;
  createdAt: string;
}

export interface ConversationMessageRecalled {
  conversationId: string;
  messageId: string;
  senderAccountId: string;
  recipientAccountId: string;
  changeSequence: number;
  /** The message's attachments, deleted with it. */
  attachmentIds: string[];
  recalledAt: string;
}

export interface ConversationClosed {
  conversationId: string;
  reason: 'gofer_deleted';
  goferId: string;
  /** Every attachment of the conversation still stored, deleted with it. */
  attachmentIds: string[];
  closedAt: string;
}

export type ConversationEvent =
  | { type: 'ConversationOpened'; data: ConversationOpened }
  | { type: 'ConversationAttachmentUploaded'; data: ConversationAttachmentUploaded }
  | { type: 'ConversationMessageSent'; data: ConversationMessageSent }
  | { type: 'ConversationMessageRecalled'; data: ConversationMessageRecalled }
  | { type: 'ConversationClosed'; data: ConversationClosed };

export const conversationStreamId = (conversationId: string) => `conversation-${conversationId}`;
