import { conversationForbidden, RejectedError } from './errors.ts';
import type { Conversation, ConversationState } from './conversationState.ts';

/** The rules every command about a message shares: who takes part, and what a message's text may be. */

/** The most attachmentIds one conversation message may carry. */
export const MAX_MESSAGE_ATTACHMENTS = 10;
/** The longest message text, in UTF-16 code units (the role-chat's bound). */
export const MAX_CONTENT_LENGTH = 20_000;

/** Unknown, closed and foreign conversations are one refusal (a probe-safe 403). */
export function assertParticipant(state: ConversationState, accountId: string): Conversation {
  if (state.status !== 'open') throw conversationForbidden();
  if (state.accountA !== accountId && state.accountB !== accountId) throw conversationForbidden();
  return state;
}

/** The account on the other side (the caller's own account when both sides are one account). */
export const otherAccount = (conv: Conversation, accountId: string) =>
  conv.accountA === accountId ? conv.accountB : conv.accountA;

const rejected = (code: ConstructorParameters<typeof RejectedError>[0], message: string) =>
  new RejectedError(code, message);

/** Shape rules of a message body, checked before anything is loaded. */
export function validateMessageInput(input: {
  content?: string | undefined;
  attachmentIds?: string[] | undefined;
  /** Present for a sealed message (then its content is the envelope's, unseen here). */
  sealed?: unknown;
}): void {
  const ids = input.attachmentIds ?? [];
  const text = input.content ?? '';
  if (input.sealed !== undefined && input.content !== undefined) {
    throw rejected('SEALED_WITH_CONTENT', 'A message has content or sealed, not both');
  }
  if (input.sealed === undefined && text.trim() === '' && ids.length === 0) {
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
