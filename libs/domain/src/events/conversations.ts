/**
 * The conversations context's domain events (schemas/conversations/*.avsc; `ConversationMessageSent`
 * is at version 2, which added `sealed` and `clientMessageId`).
 */
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

/** One device key a sealed message's content key is wrapped for (`oan-sealed-v1`). */
export interface SealedRecipient {
  accountId: string;
  keyId: string;
  nonce: string;
  wrappedKey: string;
}

/**
 * An `oan-sealed-v1` envelope as the sender sent it (docs/sealed-messages.md): every binary field
 * base64url without padding. The server checks its shape and recipients and never opens it.
 */
export interface SealedContent {
  alg: 'oan-sealed-v1';
  ephemeralKey: string;
  nonce: string;
  ciphertext: string;
  recipients: SealedRecipient[];
}

export interface ConversationMessageSent {
  conversationId: string;
  messageId: string;
  senderAccountId: string;
  recipientAccountId: string;
  /** "" for a sealed or attachment-only message. */
  content: string;
  attachments: MessageAttachment[];
  /** Dense per conversation from 1, decided under the conversation's lock. */
  changeSequence: number;
  createdAt: string;
  /**
   * The sealed content, null for a plain message. Every event written now has it; an event stored
   * as version 1 lacks it in the event store's JSON (Avro readers get null).
   */
  sealed?: SealedContent | null;
  /** The sender's retry key for this send, or null; absent like `sealed` in version 1. */
  clientMessageId?: string | null;
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
  sealed: SealedContent | null;
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

/**
 * One side of an open conversation published or retired a device key: the other side is told
 * (`system_notice` kind `conversation_key_changed`). Written by the key-notice reactor, once per
 * key event and conversation.
 */
export interface ConversationKeyChanged {
  conversationId: string;
  /** The account whose key changed. */
  accountId: string;
  /** The other side, who is told. */
  recipientAccountId: string;
  keyId: string;
  fingerprint: string;
  change: 'published' | 'retired';
  /** When the key was published or retired. */
  changedAt: string;
}

export type ConversationEvent =
  | { type: 'ConversationOpened'; data: ConversationOpened }
  | { type: 'ConversationAttachmentUploaded'; data: ConversationAttachmentUploaded }
  | { type: 'ConversationMessageSent'; data: ConversationMessageSent }
  | { type: 'ConversationMessageRecalled'; data: ConversationMessageRecalled }
  | { type: 'ConversationMessageCorrected'; data: ConversationMessageCorrected }
  | { type: 'ConversationMessageRetracted'; data: ConversationMessageRetracted }
  | { type: 'ConversationClosed'; data: ConversationClosed }
  | { type: 'ConversationKeyChanged'; data: ConversationKeyChanged };

export const conversationStreamId = (conversationId: string) => `conversation-${conversationId}`;
