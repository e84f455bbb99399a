import type { ConversationEvent, SealedContent } from '@oan/domain';
import type {
  ConversationState,
  StoredAttachment,
  StoredMessage,
  StoredRevision,
} from './conversationState.ts';
import { ForbiddenError, ConflictError, NotFoundError, RejectedError } from './errors.ts';
import { assertParticipant, otherAccount, validateMessageInput } from './messageRules.ts';
import { checkSealedRecipients, sameSealed, type CurrentKey } from './sealed.ts';

/**
 * Corrections and retractions of a sent message (docs/sealed-messages.md "Revisions", ADR 0037).
 * They see the conversation's state under its lock, so of two racing revisions of one message the
 * second decides on what the first wrote: counts are never lost, the eleventh correction is refused.
 */

/** A message may be revised this long after its `createdAt`. */
export const REVISION_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The most corrections one message takes (a retraction is always allowed within the window). */
export const MAX_CORRECTIONS = 10;

export interface ReviseMessage {
  accountId: string;
  /** The message the caller names. */
  messageId: string;
  /** The new revision's id (the `messageId` of its relay_message). */
  revisionId: string;
  /** Required by the revise route; null for DELETE, which takes none. */
  clientMessageId: string | null;
  action: 'correct' | 'retract';
  content?: string | undefined;
  sealed?: SealedContent | undefined;
  /** A sealed correction may leave out current keys of the receiving side, as a send may. */
  allowMissing?: boolean | undefined;
  /** Both sides' current device keys, read under the lock (for a sealed correction). */
  keys: CurrentKey[];
  /** The index row of the message, null when this conversation has none of that id. */
  message: StoredMessage | null;
  /** The caller's earlier revision in this conversation under the same clientMessageId, if any. */
  prior: StoredRevision | null;
  /** The message's attachments as the index has them (a retraction deletes them). */
  attachments: StoredAttachment[];
  /** Those of them another message still uses: a retraction keeps them. */
  usedElsewhere: string[];
}

const notFound = () => new NotFoundError('MESSAGE_NOT_FOUND', 'Message not found');
const reused = () =>
  new ConflictError('CLIENT_MESSAGE_ID_REUSED', 'clientMessageId was already used for another revision');

/** A blank text is stored as "", as sending stores it. */
const normalized = (content: string) => (content.trim() === '' ? '' : content);

/**
 * A revision: the caller's retry answers again (no event), a clientMessageId of another body is
 * refused; then the message (the sender's own, not withdrawn), the 24-hour window, and per action
 * the correction's rules or the retraction's attachments.
 */
export function decideRevise(
  state: ConversationState,
  input: ReviseMessage,
  now: string,
): ConversationEvent[] {
  const c = assertParticipant(state, input.accountId);
  const { message, prior } = input;
  if (prior) {
    if (prior.messageId !== input.messageId || prior.action !== input.action) throw reused();
    if (prior.action === 'correct') {
      // The message was withdrawn since: the correction's content is gone, and so is the message.
      if (!message || message.recalled) throw notFound();
      if (!sameCorrection(prior, input)) throw reused();
    }
    return [];
  }
  if (!message || message.recalled) throw notFound();
  if (message.senderAccountId !== input.accountId) {
    throw new ForbiddenError('MESSAGE_NOT_YOURS', 'Only the sender may revise a message');
  }
  if (Date.parse(now) - Date.parse(message.createdAt) > REVISION_WINDOW_MS) {
    throw new ConflictError('REVISION_WINDOW_CLOSED', 'A message can be revised for 24 hours only');
  }
  const common = {
    conversationId: c.id,
    messageId: message.id,
    revisionId: input.revisionId,
    senderAccountId: input.accountId,
    recipientAccountId: otherAccount(c, input.accountId),
    changeSequence: message.changeSequence,
  };
  if (input.action === 'retract') {
    const kept = new Set(input.usedElsewhere);
    const attachmentIds = input.attachments
      .filter(
        (a) => !a.deleted && message.attachmentIds.includes(a.attachmentId) && !kept.has(a.attachmentId),
      )
      .map((a) => a.attachmentId);
    return [
      {
        type: 'ConversationMessageRetracted',
        data: {
          ...common,
          clientMessageId: input.clientMessageId,
          count: message.corrections,
          attachmentIds,
          retractedAt: now,
        },
      },
    ];
  }
  if (input.clientMessageId === null) throw new Error('A correction always has a clientMessageId');
  if (message.corrections >= MAX_CORRECTIONS) {
    throw new ConflictError('REVISION_LIMIT', `A message takes at most ${MAX_CORRECTIONS} corrections`);
  }
  const { content, sealed } = correctionOf(message, input, {
    sender: input.accountId,
    recipient: otherAccount(c, input.accountId),
  });
  return [
    {
      type: 'ConversationMessageCorrected',
      data: {
        ...common,
        clientMessageId: input.clientMessageId,
        content,
        sealed,
        count: message.corrections + 1,
        correctedAt: now,
      },
    },
  ];
}

/**
 * A correction keeps the message's kind: a plain message takes `content` under the rules of sending
 * (its attachments stay, so it may become blank when it has some), a sealed one takes `sealed`.
 */
function correctionOf(
  message: StoredMessage,
  input: ReviseMessage,
  sides: { sender: string; recipient: string },
): { content: string; sealed: SealedContent | null } {
  if (message.sealed) {
    if (input.sealed === undefined || input.content !== undefined) {
      throw new RejectedError('REVISION_KIND_MISMATCH', 'A sealed message is corrected with sealed only');
    }
    checkSealedRecipients(input.sealed, input.keys, sides, input.allowMissing === true);
    return { content: '', sealed: input.sealed };
  }
  if (input.content === undefined || input.sealed !== undefined) {
    throw new RejectedError('REVISION_KIND_MISMATCH', 'A plain message is corrected with content only');
  }
  validateMessageInput({ content: input.content, attachmentIds: message.attachmentIds });
  return { content: normalized(input.content), sealed: null };
}

/** The same correction asked for again: the same new text, or the same sealed envelope. */
function sameCorrection(prior: StoredRevision, input: ReviseMessage): boolean {
  if (prior.sealed === null) {
    return (
      input.sealed === undefined && input.content !== undefined && normalized(input.content) === prior.content
    );
  }
  return input.content === undefined && input.sealed !== undefined && sameSealed(prior.sealed, input.sealed);
}
