import { RejectedError } from './errors.ts';
import type {
  ConversationEvent,
  ConversationMessageSent,
  ConversationOpened,
  Decider,
  MessageAttachment,
  SealedContent,
  Timed,
} from '@oan/domain';
import {
  evolveConversation,
  initialConversationState,
  type ConversationState,
  type StoredAttachment,
} from './conversationState.ts';
import { assertParticipant, otherAccount, validateMessageInput } from './messageRules.ts';
import { decideRevise, type ReviseMessage } from './revisions.ts';
import {
  checkSealedRecipients,
  clientMessageIdReused,
  sameSend,
  storedContent,
  type CurrentKey,
} from './sealed.ts';
import { decideKeyNotice, type NoticeKeyChange } from './keyNotice.ts';

export {
  assertParticipant,
  MAX_CONTENT_LENGTH,
  MAX_MESSAGE_ATTACHMENTS,
  otherAccount,
  validateMessageInput,
} from './messageRules.ts';

/**
 * The conversation aggregate's decisions (the post-match direct channel). They see the conversation's
 * state loaded under its lock (the snapshot row, src/commands/context.ts), so a decision such as the
 * next `changeSequence` or "this attachment is not used yet" can never be taken twice. A decision about
 * one message or one file gets that fact in its command, read from the write-side index in the same
 * transaction.
 */

export type { NoticeKeyChange };

export type ConversationCommand =
  | { type: 'OpenConversation'; data: OpenConversation }
  | { type: 'UploadAttachment'; data: UploadAttachment }
  | { type: 'SendMessage'; data: SendMessage }
  | { type: 'ReviseMessage'; data: ReviseMessage }
  | { type: 'CloseForDeletedGofer'; data: CloseForDeletedGofer }
  | { type: 'NoticeKeyChange'; data: NoticeKeyChange };

export interface SendMessage {
  accountId: string;
  messageId: string;
  content?: string | undefined;
  /** Instead of `content`: an `oan-sealed-v1` envelope (docs/sealed-messages.md). */
  sealed?: SealedContent | undefined;
  attachmentIds?: string[] | undefined;
  /** The sender's retry key: the same send again answers the message it made. */
  clientMessageId?: string | undefined;
  /** A sealed message may leave out current keys of the receiving side. */
  allowMissing?: boolean | undefined;
  /** The index rows of `attachmentIds` found in this conversation. */
  attachments: StoredAttachment[];
  /** The current device keys of both sides, read in the send's transaction (for a sealed message). */
  keys: CurrentKey[];
  /** The sender's message of this conversation under the same `clientMessageId`, if there is one. */
  previous: ConversationMessageSent | null;
}

const rejected = (code: ConstructorParameters<typeof RejectedError>[0], message: string) =>
  new RejectedError(code, message);

/**
 * Sending a message: it takes the next changeSequence. Each attachment must have been uploaded by the
 * caller to this conversation, be stored still, and not be attached to another message; one refusal
 * for all of these (probe-safe inside a conversation). `content` is "" for an attachment-only or a
 * sealed message. A `clientMessageId` used before decides nothing new: the same send is answered
 * with its message (the caller has it as `previous`), another one is refused.
 */
export function decideSend(state: ConversationState, input: SendMessage, now: string): ConversationEvent[] {
  const c = assertParticipant(state, input.accountId);
  if (input.previous) {
    if (!sameSend(input.previous, input)) throw clientMessageIdReused();
    return [];
  }
  validateMessageInput(input);
  const recipient = otherAccount(c, input.accountId);
  if (input.sealed !== undefined) {
    const sides = { sender: input.accountId, recipient };
    checkSealedRecipients(input.sealed, input.keys, sides, input.allowMissing === true);
  }
  const ids = input.attachmentIds ?? [];
  const byId = new Map(input.attachments.map((a) => [a.attachmentId, a]));
  const chosen: MessageAttachment[] = [];
  for (const id of ids) {
    const a = byId.get(id);
    if (!a || a.uploaderAccountId !== input.accountId || a.deleted || a.messageId !== null) {
      throw rejected(
        'ATTACHMENT_UNUSABLE',
        `Attachment ${id} was not uploaded by you to this conversation, or is already used`,
      );
    }
    const { attachmentId, kind, name, mimeType, size, width, height } = a;
    chosen.push({ attachmentId, kind, name, mimeType, size, width, height });
  }
  return [
    {
      type: 'ConversationMessageSent',
      data: {
        conversationId: c.id,
        messageId: input.messageId,
        senderAccountId: input.accountId,
        recipientAccountId: recipient,
        content: storedContent(input),
        attachments: chosen,
        changeSequence: c.lastChangeSequence + 1,
        createdAt: now,
        sealed: input.sealed ?? null,
        clientMessageId: input.clientMessageId ?? null,
      },
    },
  ];
}

export interface UploadAttachment extends MessageAttachment {
  accountId: string;
  storageKey: string;
}

/** Uploading an attachment: a participant's file, stored before this is decided. */
export function decideUpload(
  state: ConversationState,
  input: UploadAttachment,
  now: string,
): ConversationEvent[] {
  const c = assertParticipant(state, input.accountId);
  const { accountId, storageKey, ...attachment } = input;
  return [
    {
      type: 'ConversationAttachmentUploaded',
      data: {
        conversationId: c.id,
        uploaderAccountId: accountId,
        storageKey,
        ...attachment,
        uploadedAt: now,
      },
    },
  ];
}

export interface CloseForDeletedGofer {
  goferId: string;
  /** Every attachment of the conversation still stored (the index). */
  attachmentIds: string[];
}

/** A Gofer of the conversation was deleted (its conversations go with it): closed once, its files with it. */
export function decideClose(
  state: ConversationState,
  { goferId, attachmentIds }: CloseForDeletedGofer,
  now: string,
): ConversationEvent[] {
  if (state.status !== 'open') return [];
  if (state.goferA !== goferId && state.goferB !== goferId) return [];
  return [
    {
      type: 'ConversationClosed',
      data: { conversationId: state.id, reason: 'gofer_deleted', goferId, attachmentIds, closedAt: now },
    },
  ];
}

export interface OpenConversation {
  opened: ConversationOpened;
  /** One of the two Gofers when it is deleted already: the conversation closes at once. */
  deletedGoferId: string | null;
}

/**
 * The opener reactor, or a route that meets a conversation the reactor has not opened yet. A
 * conversation opens once: a second opener (a redelivery, the route racing the reactor) appends nothing.
 */
export function decideOpen(
  state: ConversationState,
  { opened, deletedGoferId }: OpenConversation,
  now: string,
): ConversationEvent[] {
  if (state.status !== 'none') return [];
  const events: ConversationEvent[] = [{ type: 'ConversationOpened', data: opened }];
  if (deletedGoferId !== null) {
    const { conversationId } = opened;
    events.push({
      type: 'ConversationClosed',
      data: {
        conversationId,
        reason: 'gofer_deleted',
        goferId: deletedGoferId,
        attachmentIds: [],
        closedAt: now,
      },
    });
  }
  return events;
}

export function decideConversation(
  command: Timed<ConversationCommand>,
  state: ConversationState,
): ConversationEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'OpenConversation':
      return decideOpen(state, command.data, now);
    case 'UploadAttachment':
      return decideUpload(state, command.data, now);
    case 'SendMessage':
      return decideSend(state, command.data, now);
    case 'ReviseMessage':
      return decideRevise(state, command.data, now);
    case 'CloseForDeletedGofer':
      return decideClose(state, command.data, now);
    case 'NoticeKeyChange':
      return decideKeyNotice(state, command.data);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const conversationDecider: Decider<
  ConversationState,
  ConversationEvent,
  Timed<ConversationCommand>
> = {
  initialState: initialConversationState,
  evolve: evolveConversation,
  decide: decideConversation,
};
