/** The conversations context's domain events (schemas/conversations/*.avsc, version 1). */
import type { SealedEnvelope } from '@oan/sealed';
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

/**
 * The sender corrected its message (docs/sealed-messages.md "Revisions"): the message keeps its id
 * and changeSequence; `revisionId` is the id of this revision, the `messageId` of its relay_message.
 */
export interface ConversationMessageCorrected {
  conversationId: string;
  messageId: string;
  revisionId: string;
  senderAccountId: string;
  recipientAccountId: string;
  clientMessageId: string;
  changeSequence: number;
  /** The new text; "" when the message is sealed. */
  content: string;
  /** The new sealed content of a sealed message, else null. */
  sealed: SealedEnvelope | null;
  /** Corrections of the message so far, this one included. */
  count: number;
  correctedAt: string;
}

/**
 * The sender withdrew its message (the revise route's `retract`, or DELETE): its content goes, it
 * leaves both histories; `ConversationMessageRecalled` is the same fact as older logs recorded it.
 */
export interface ConversationMessageRetracted {
  conversationId: string;
  messageId: string;
  revisionId: string;
  senderAccountId: string;
  recipientAccountId: string;
  /** null when withdrawn through DELETE, which takes none. */
  clientMessageId: string | null;
  changeSequence: number;
  /** Corrections of the message before it. */
  count: number;
  /** The message's attachments deleted with it (those no other message uses). */
  attachmentIds: string[];
  retractedAt: string;
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
  | { type: 'ConversationMessageCorrected'; data: ConversationMessageCorrected }
  | { type: 'ConversationMessageRetracted'; data: ConversationMessageRetracted }
  | { type: 'ConversationClosed'; data: ConversationClosed };

export const conversationStreamId = (conversationId: string) => `conversation-${conversationId}`;
