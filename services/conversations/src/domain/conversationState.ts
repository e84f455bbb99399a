import type { ConversationEvent, ConversationOpened, MessageAttachment, SealedContent } from '@oan/domain';

/**
 * Stream `conversation-<conversationId>`: the two accounts of a match and their messages. A send
 * decides on this small state, never on the history (ADR 0013): it is the write side's snapshot row,
 * evolved and saved with every append. What a decision needs about one message or one file is in the
 * write-side index (`indexChangesOf`), read for that decision only.
 */

/** What `ConversationOpened` says of the two sides (side a requested the match), and the counter. */
export type ConversationData = Omit<ConversationOpened, 'conversationId' | 'openedAt'> & {
  id: string;
  /** The last changeSequence handed out (0 before the first message). */
  lastChangeSequence: number;
};

export type ConversationState =
  { status: 'none' } | ({ status: 'open' } & ConversationData) | ({ status: 'closed' } & ConversationData);
export type Conversation = Exclude<ConversationState, { status: 'none' }>;

export const initialConversationState = (): ConversationState => ({ status: 'none' });

export function evolveConversation(state: ConversationState, event: ConversationEvent): ConversationState {
  if (event.type === 'ConversationOpened') {
    if (state.status !== 'none') return state;
    const { conversationId, openedAt: _at, ...d } = event.data;
    return { status: 'open', id: conversationId, ...d, lastChangeSequence: 0 };
  }
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'ConversationMessageSent':
      return {
        ...state,
        lastChangeSequence: Math.max(state.lastChangeSequence, event.data.changeSequence),
      };
    case 'ConversationClosed':
      return { ...state, status: 'closed' };
    // Facts about one file or one message: the index keeps them (indexChangesOf). A key notice
    // changes nothing here.
    case 'ConversationAttachmentUploaded':
    case 'ConversationMessageRecalled':
    case 'ConversationMessageCorrected':
    case 'ConversationMessageRetracted':
    case 'ConversationKeyChanged':
      return state;
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}

// ---- The write-side index: the per-message and per-attachment facts decisions read ----

/** A file of the conversation, as the send and recall decisions need it. */
export interface StoredAttachment extends MessageAttachment {
  uploaderAccountId: string;
  /** The message it is attached to, once sent. */
  messageId: string | null;
  deleted: boolean;
}

export interface StoredMessage {
  id: string;
  senderAccountId: string;
  changeSequence: number;
  /** Withdrawn: recalled (older logs) or retracted. */
  recalled: boolean;
  attachmentIds: string[];
  createdAt: string;
  /** Corrections so far. */
  corrections: number;
  /** Its content is sealed (oan-sealed-v1): a correction must be sealed too. */
  sealed: boolean;
}

/** One revision of a message as the index keeps it: what a retry under its clientMessageId answers. */
export interface StoredRevision {
  id: string;
  messageId: string;
  senderAccountId: string;
  /** null for a retraction through DELETE. */
  clientMessageId: string | null;
  action: 'correct' | 'retract';
  /** The corrected text ("" once the message is retracted, and for sealed or retracting revisions). */
  content: string;
  sealed: SealedContent | null;
  /** Corrections of the message after this revision. */
  count: number;
  at: string;
}

/** One change to the index rows (`conversations.attachments`, `conversations.messages`). */
export type IndexChange =
  | {
      type: 'attachment_stored';
      conversationId: string;
      attachment: StoredAttachment & { storageKey: string };
    }
  | {
      type: 'message_stored';
      conversationId: string;
      message: StoredMessage;
      /** The sender's retry key, found again by (conversation, sender, clientMessageId). */
      clientMessageId: string | null;
    }
  | { type: 'attachments_used'; conversationId: string; messageId: string; attachmentIds: string[] }
  | { type: 'message_recalled'; messageId: string }
  | { type: 'message_corrected'; messageId: string; corrections: number }
  | { type: 'revision_stored'; conversationId: string; revision: StoredRevision }
  /** A retraction strips the content of the message's earlier corrections. */
  | { type: 'revisions_stripped'; messageId: string }
  | { type: 'attachments_deleted'; conversationId: string; attachmentIds: string[] };

/**
 * What an event changes in the index: a function of the event alone, so replaying the stream
 * rebuilds the index (`rebuildWriteState`). Each change is idempotent where it is applied.
 */
export function indexChangesOf(event: ConversationEvent): IndexChange[] {
  switch (event.type) {
    case 'ConversationOpened':
    case 'ConversationKeyChanged':
      return [];
    case 'ConversationAttachmentUploaded': {
      const { conversationId, uploadedAt: _at, ...a } = event.data;
      return [
        {
          type: 'attachment_stored',
          conversationId,
          attachment: { ...a, messageId: null, deleted: false },
        },
      ];
    }
    case 'ConversationMessageSent': {
      const d = event.data;
      const attachmentIds = d.attachments.map((a) => a.attachmentId);
      const message = {
        id: d.messageId,
        senderAccountId: d.senderAccountId,
        changeSequence: d.changeSequence,
        recalled: false,
        attachmentIds,
        createdAt: d.createdAt,
        corrections: 0,
        sealed: d.sealed != null,
      };
      const changes: IndexChange[] = [
        {
          type: 'message_stored',
          conversationId: d.conversationId,
          message,
          // absent from events stored as version 1
          clientMessageId: d.clientMessageId ?? null,
        },
      ];
      if (attachmentIds.length > 0) {
        const { conversationId, messageId } = d;
        changes.push({ type: 'attachments_used', conversationId, messageId, attachmentIds });
      }
      return changes;
    }
    case 'ConversationMessageRecalled': {
      const { conversationId, messageId, attachmentIds } = event.data;
      return [
        { type: 'message_recalled', messageId },
        { type: 'attachments_deleted', conversationId, attachmentIds },
      ];
    }
    case 'ConversationMessageCorrected': {
      const d = event.data;
      const revision: StoredRevision = {
        id: d.revisionId,
        messageId: d.messageId,
        senderAccountId: d.senderAccountId,
        clientMessageId: d.clientMessageId,
        action: 'correct',
        content: d.content,
        sealed: d.sealed,
        count: d.count,
        at: d.correctedAt,
      };
      return [
        { type: 'message_corrected', messageId: d.messageId, corrections: d.count },
        { type: 'revision_stored', conversationId: d.conversationId, revision },
      ];
    }
    case 'ConversationMessageRetracted': {
      const d = event.data;
      const { conversationId, messageId, attachmentIds } = d;
      const revision: StoredRevision = {
        id: d.revisionId,
        messageId,
        senderAccountId: d.senderAccountId,
        clientMessageId: d.clientMessageId,
        action: 'retract',
        content: '',
        sealed: null,
        count: d.count,
        at: d.retractedAt,
      };
      return [
        { type: 'message_recalled', messageId },
        { type: 'revisions_stripped', messageId },
        { type: 'revision_stored', conversationId, revision },
        { type: 'attachments_deleted', conversationId, attachmentIds },
      ];
    }
    case 'ConversationClosed': {
      const { conversationId, attachmentIds } = event.data;
      return [{ type: 'attachments_deleted', conversationId, attachmentIds }];
    }
    default: {
      const unexpected: never = event;
      throw new Error(`Unknown conversation event ${(unexpected as { type: string }).type}`);
    }
  }
}
