import * as Kind from '@oan/domain';

/**
 * Coded refusals of the matching context. The HTTP layer maps each code to its status and body in
 * one place (src/http/errors.ts); nothing here knows about statuses. The mapping: NotFound ⇒ 404,
 * Forbidden ⇒ 403, IllegalState ⇒ 400 `BAD_REQUEST`, Rejected ⇒ 400 `VALIDATION_ERROR`.
 */

/**
 * `THREAD_NOT_FOUND`: `/threads/:id…` on an unknown thread (404), and `POST /match-requests` on an
 * unknown thread **or** one the caller's Gofer is not in (404 for both).
 * `ATTACHMENT_NOT_FOUND`: on the counterpart-attachment URL, an attachment unknown, deleted or not
 * the counterpart's (404).
 */
export type NotFoundCode = 'THREAD_NOT_FOUND' | 'ATTACHMENT_NOT_FOUND';
/**
 * `THREAD_FORBIDDEN`: the thread exists but the caller's Gofer is not in it (403, frozen, not probe-safe).
 * `MATCH_REQUEST_FORBIDDEN`: unknown request id or caller not its recipient — one byte-identical
 * refusal (probe-safe 403).
 */
export type ForbiddenCode = 'THREAD_FORBIDDEN' | 'MATCH_REQUEST_FORBIDDEN';
/** The thread's state forbids the command (400). */
export type IllegalStateCode =
  | 'THREAD_NOT_AWAITING_CONFIRMATION'
  | 'THREAD_NOT_ACTIVE'
  | 'THREAD_CLOSED'
  | 'SESSION_NOT_ENDED'
  | 'SESSION_FULL'
  | 'SESSION_TURN_OUT_OF_ORDER'
  | 'MATCH_REQUEST_ALREADY_DECIDED';
/** A caller's (or a reactor's) input is refused before the state is looked at. */
export type RejectedCode = 'SAME_GOFER' | 'SAME_ACCOUNT' | 'NOT_A_PARTICIPANT';

/**
 * The engine matches this substring on a failed pair/confirm and treats it as success,
 * so the message is part of the protocol: the HTTP body's `error` must carry it verbatim.
 */
export const NOT_WAITING_FOR_CONFIRMATION = 'Thread is not waiting for confirmation.';

export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}

export class ForbiddenError extends Kind.ForbiddenError<ForbiddenCode> {}

export class IllegalStateError extends Kind.IllegalStateError<IllegalStateCode> {}

export class RejectedError extends Kind.RejectedError<RejectedCode> {}

export type DomainError = NotFoundError | ForbiddenError | IllegalStateError | RejectedError;

export function isDomainError(err: unknown): err is DomainError {
  return (
    err instanceof NotFoundError ||
    err instanceof ForbiddenError ||
    err instanceof IllegalStateError ||
    err instanceof RejectedError
  );
}
