import * as Kind from '@oan/domain';

/**
 * Coded refusals of the conversations context; src/http/errors.ts maps them to statuses and bodies.
 * `CONVERSATION_FORBIDDEN`: unknown, closed, or not the caller's conversation — one probe-safe 403.
 * `MESSAGE_NOT_YOURS`: a participant revising (or recalling) the other side's message (403).
 */
export type ForbiddenCode = 'CONVERSATION_FORBIDDEN' | 'MESSAGE_NOT_YOURS';
/** Unknown, deleted or another conversation's attachment; the recall of an unknown message; a key never published. */
export type NotFoundCode = 'ATTACHMENT_NOT_FOUND' | 'MESSAGE_NOT_FOUND' | 'KEY_NOT_FOUND';
/** Every refusal of a message body is a 400. */
export type RejectedCode =
  | 'MESSAGE_EMPTY'
  | 'MESSAGE_TOO_LONG'
  | 'TOO_MANY_ATTACHMENTS'
  | 'DUPLICATE_ATTACHMENT'
  | 'ATTACHMENT_UNUSABLE'
  | 'REVISION_KIND_MISMATCH'
  | 'SEALED_INVALID'
  | 'SEALED_WITH_CONTENT'
  | 'SEALED_RECIPIENT_UNKNOWN';
/** What the key directory, the conversation or the message holds now forbids (409). */
export type ConflictCode =
  | 'KEY_ID_IN_USE'
  | 'TOO_MANY_KEYS'
  | 'SEALED_RECIPIENTS_MISSING'
  | 'RECIPIENT_HAS_NO_KEY'
  | 'CLIENT_MESSAGE_ID_REUSED'
  | 'REVISION_WINDOW_CLOSED'
  | 'REVISION_LIMIT';

export class ForbiddenError extends Kind.ForbiddenError<ForbiddenCode> {}
export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}
export class RejectedError extends Kind.RejectedError<RejectedCode> {}
export class ConflictError extends Kind.IllegalStateError<ConflictCode> {}

export type DomainError = ForbiddenError | NotFoundError | RejectedError | ConflictError;

export function isDomainError(err: unknown): err is DomainError {
  return (
    err instanceof ForbiddenError ||
    err instanceof NotFoundError ||
    err instanceof RejectedError ||
    err instanceof ConflictError
  );
}

export const conversationForbidden = () => new ForbiddenError('CONVERSATION_FORBIDDEN', 'Forbidden');
