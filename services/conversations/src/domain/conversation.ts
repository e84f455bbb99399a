import { conversationForbidden, ForbiddenError, NotFoundError, RejectedError } from './errors.ts';
import type { ConversationEvent, MessageAttachment } from '@oan/domain';

/**
 * The conversation aggregate's decisions (§4.7). They see the write side's current state of the one
 * conversation, loaded under its lock (src/commands/context.ts), so a decision such as the next
 * `changeSequence` or "this attachment is not used yet" can never be taken twice.
 */

/** §7: attachmentIds per conversation message. */
export const MAX_MESSAGE_ATTACHMENTS = 10;
/** The longest message text, in UTF-16 code units (the role-chat's bound). */
export const MAX_CONTENT_LENGTH = 20_000;

export interface Conversation {
  id: string;
  accountA: string;
  goferA: string;
  accountB: string;
  goferB: string;
  status: 'open' | 'closed';
  /** The last changeSequence handed out (0 before the first message). */
  lastChangeSequence: number;
}

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
  recalled: boolean;
  attachmentIds: string[];
}

/** §4.7 / §6: unknown (null), closed and foreign conversations are one refusal. */
export function assertParticipant(conv: Conversation | null, accountId: string): Conversation {
  if (!conv || conv.status !== 'open') throw conversationForbidden();
  if (conv.accountA !== accountId && conv.accountB !== accountId) throw conversationForbidden();
  return conv;
}

/** The account on the other side (the caller's own account when both sides are one account). */
export const otherAccount = (conv: Conversation, accountId: string) =>
  conv.accountA === accountId ? conv.accountB : conv.accountA;

export interface SendMessage {
  accountId: string;
  messageId: string;
  content?: string | undefined;
  attachmentIds?: string[] | undefined;
}

const rejected = (code: ConstructorParameters<typeof RejectedError>[0], message: string) =>
  new RejectedError(code, message);

/** Shape rules of a message body, checked before anything is loaded. */
export function validateMessageInput(input: Pick<SendMessage, 'content' | 'attachmentIds'>): void {
  const ids = input.attachmentIds ?? [];
  const text = input.content ?? '';
  if (text.trim() === '' && ids.length === 0) {
    throw rejected('MESSAGE_EMPTY', 'A message needs non-blank content or at least one attachment');
  }
  if (text.length > MAX_CONTENT_LENGTH) {
    throw rejected('MESSAGE_TOO_LONG', `content is longer than ${MAX_CONTENT_LENGTH} characters`);
  }
  if (ids.length > MAX_MESSAGE_ATTACHMENTS) {
    throw rejected('TOO_MANY_ATTACHMENTS', `At most ${MAX_MESSAGE_ATTACHMENTS} attachmentIds per message`);
  }
  if (new Set(ids).size !== ids.length) {
    throw rejected('DUPLICATE_ATTACHMENT', 'attachmentIds lists an attachment twice');
  }
}

/**
 * §4.7 (28): a message takes the next changeSequence. Each attachment must have been uploaded by the
 * caller to this conversation, be stored still, and not be attached to another message; one refusal
 * for all of these (probe-safe inside a conversation). `attachments` are the rows of those ids found
 * in this conversation. `content` is "" for an attachment-only message.
 */
export function decideSend(
  conv: Conversation | null,
  input: SendMessage,
  attachments: StoredAttachment[],
  now: string,
): ConversationEvent[] {
  const c = assertParticipant(conv, input.accountId);
  validateMessageInput(input);
  const ids = input.attachmentIds ?? [];
  const byId = new Map(attachments.map((a) => [a.attachmentId, a]));
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
  const text = input.content ?? '';
  return [
    {
      type: 'ConversationMessageSent',
      data: {
        conversationId: c.id,
        messageId: input.messageId,
        senderAccountId: input.accountId,
        recipientAccountId: otherAccount(c, input.accountId),
        content: text.trim() === '' ? '' : text,
        attachments: chosen,
        changeSequence: c.lastChangeSequence + 1,
        createdAt: now,
      },
    },
  ];
}

export interface UploadAttachment extends MessageAttachment {
  accountId: string;
  storageKey: string;
}

/** §4.7 (29): a participant's file, stored before this is decided. */
export function decideUpload(
  conv: Conversation | null,
  input: UploadAttachment,
  now: string,
): ConversationEvent[] {
  const c = assertParticipant(conv, input.accountId);
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

/**
 * Extension (DELETE …/messages/:messageId): the sender withdraws its own message. Unknown and already
 * recalled messages are 404; the other side's message is 403 (both sides see every message anyway).
 */
export function decideRecall(
  conv: Conversation | null,
  accountId: string,
  message: StoredMessage | null,
  now: string,
): ConversationEvent[] {
  const c = assertParticipant(conv, accountId);
  if (!message || message.recalled) throw new NotFoundError('MESSAGE_NOT_FOUND', 'Message not found');
  if (message.senderAccountId !== accountId) {
    throw new ForbiddenError('MESSAGE_NOT_YOURS', 'Only the sender may recall a message');
  }
  return [
    {
      type: 'ConversationMessageRecalled',
      data: {
        conversationId: c.id,
        messageId: message.id,
        senderAccountId: accountId,
        recipientAccountId: otherAccount(c, accountId),
        changeSequence: message.changeSequence,
        attachmentIds: message.attachmentIds,
        recalledAt: now,
      },
    },
  ];
}

/** A Gofer of the conversation was deleted (§4.4 (15) cascades): closed once, its files with it. */
export function decideClose(
  conv: Conversation | null,
  goferId: string,
  attachmentIds: string[],
  now: string,
): ConversationEvent[] {
  if (!conv || conv.status === 'closed') return [];
  if (conv.goferA !== goferId && conv.goferB !== goferId) return [];
  return [
    {
      type: 'ConversationClosed',
      data: { conversationId: conv.id, reason: 'gofer_deleted', goferId, attachmentIds, closedAt: now },
    },
  ];
}
