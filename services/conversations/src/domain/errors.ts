import * as Kind from '@oan/domain';

/**
 * Coded refusals of the conversations context; src/http/errors.ts maps them to statuses and bodies.
 * `CONVERSATION_FORBIDDEN`: unknown, closed, or not the caller's conversation — one probe-safe 403.
 * `MESSAGE_NOT_YOURS`: a participant revising (or recalling) the other side's message (403).
 */
export type ForbiddenCode = 'CONVERSATION_FORBIDDEN' | 'MESSAGE_NOT_YOURS';
/** Unknown, deleted or another conversation's attachment; an unknown or withdrawn message. */
export type NotFoundCode = 'ATTACHMENT_NOT_FOUND' | 'MESSAGE_NOT_FOUND';
/** Every refusal of a message body is a 400. */
export type RejectedCode =
  | 'MESSAGE_EMPTY'
  | 'MESSAGE_TOO_LONG'
  | 'TOO_MANY_ATTACHMENTS'
  | 'DUPLICATE_ATTACHMENT'
  | 'ATTACHMENT_UNUSABLE'
  | 'REVISION_KIND_MISMATCH'
  | 'SEALED_INVALID';
/** A revision the message's state no longer allows, or a clientMessageId used for another body (409). */
export type IllegalStateCode = 'REVISION_WINDOW_CLOSED' | 'REVISION_LIMIT' | 'CLIENT_MESSAGE_ID_REUSED';

export class ForbiddenError extends Kind.ForbiddenError<ForbiddenCode> {}
export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}
export class RejectedError extends Kind.RejectedError<RejectedCode> {}
export class IllegalStateError extends Kind.IllegalStateError<IllegalStateCode> {}

export type DomainError = ForbiddenError | NotFoundError | RejectedError | IllegalStateError;

export function isDomainError(err: unknown): err is DomainError {
  return (
    err instanceof ForbiddenError ||
    err instanceof NotFoundError ||
    err instanceof RejectedError ||
    err instanceof IllegalStateError
  );
}

export const conversationForbidden = () => new ForbiddenError('CONVERSATION_FORBIDDEN', 'Forbidden');
