import * as Kind from '@oan/domain';

/**
 * Coded refusals of the runtimes context. The HTTP layer maps each code to its status and body in
 * one place (src/http/errors.ts); nothing here knows about statuses.
 */

/** Unknown, deleted and another account's runtime: one refusal, so a probe learns nothing. */
export type NotFoundCode = 'RUNTIME_NOT_FOUND' | 'JOB_NOT_FOUND';
/** The runtime's or the job's state forbids the request; nothing was written. */
export type IllegalStateCode =
  | 'RUNTIME_EXISTS'
  | 'VERSION_CONFLICT'
  | 'LEASE_LOST'
  | 'FINISH_CONFLICT'
  | 'RUNTIME_HAS_ENDPOINT'
  | 'RUNTIME_WITHOUT_ENDPOINT'
  | 'JOB_SUPERSEDED';
/**
 * Refused before anything is read or written; a failed verification only records the failure and
 * leaves the runtime `unverified`.
 */
export type RejectedCode = 'RUNTIME_LIMIT_REACHED' | 'OUTCOME_NOT_SUPPORTED' | 'VERIFICATION_FAILED';

export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}

export class IllegalStateError extends Kind.IllegalStateError<IllegalStateCode> {}

export class RejectedError extends Kind.RejectedError<RejectedCode> {}

export type DomainError = NotFoundError | IllegalStateError | RejectedError;

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof NotFoundError || err instanceof IllegalStateError || err instanceof RejectedError;
}
