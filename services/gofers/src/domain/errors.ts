import * as Kind from '@oan/domain';

/**
 * Coded refusals of the gofers context. The HTTP layer maps each code to its status and body in one
 * place (src/http/errors.ts); nothing here knows about statuses.
 */

/**
 * Unknown, deleted and another account's Gofer on every `/gofers/:goferId/*` route but DELETE:
 * one refusal, so the answers are byte-identical (a probe learns nothing).
 */
export type ForbiddenCode = 'GOFER_FORBIDDEN';
/** DELETE of an unknown (or already deleted) Gofer: a 404, the one exception to the uniform 403. */
export type NotFoundCode = 'GOFER_NOT_FOUND' | 'ATTACHMENT_NOT_FOUND';
/** Input refused before anything is appended; all of them are 400 VALIDATION_ERROR (chat messages). */
export type RejectedCode =
  | 'MESSAGE_EMPTY'
  | 'TOO_MANY_ATTACHMENTS'
  | 'ATTACHMENTS_UNAVAILABLE'
  | 'ATTACHMENT_UNKNOWN'
  | 'PHOTO_ALREADY_USED'
  /** A caller's question for the owner while the Gofer's queue of them is full (ADR 0036). */
  | 'OWNER_QUESTIONS_FULL';

export class ForbiddenError extends Kind.ForbiddenError<ForbiddenCode> {}

export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}

export class RejectedError extends Kind.RejectedError<RejectedCode> {}

export type DomainError = ForbiddenError | NotFoundError | RejectedError;

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof ForbiddenError || err instanceof NotFoundError || err instanceof RejectedError;
}

/** An A2A task that may not change any more (ADR 0035): never an HTTP answer, the task store's. */
export type IllegalStateCode = 'A2A_TASK_TERMINAL' | 'A2A_TASK_FOREIGN';

export class IllegalStateError extends Kind.IllegalStateError<IllegalStateCode> {}
