import * as Kind from '@oan/domain';

/**
 * Coded refusals of the auth context. The HTTP layer maps each code to its status and body in one
 * place (src/http/errors.ts); nothing here knows about statuses.
 */
export type NotFoundCode = 'ACCOUNT_NOT_FOUND' | 'API_KEY_NOT_FOUND';
export type IllegalStateCode = 'ACCOUNT_BANNED' | 'PAIRING_CODE_INVALID' | 'PAIRING_CODE_TAKEN';
export type RejectedCode =
  | 'EMAIL_CODE_INVALID'
  | 'EMAIL_COOLDOWN'
  | 'TOO_MANY_FAILED_ATTEMPTS'
  | 'DISPOSABLE_EMAIL'
  | 'GOOGLE_NOT_CONFIGURED'
  | 'GOOGLE_TOKEN_INVALID';
export type UnavailableCode = 'MAIL_UNAVAILABLE';

/** The aggregate (or the thing inside it) does not exist. */
export class NotFoundError extends Kind.NotFoundError<NotFoundCode> {}

/** The aggregate's state forbids the command. */
export class IllegalStateError extends Kind.IllegalStateError<IllegalStateCode> {}

/** The caller's input or credential is refused before any state is touched. */
export class RejectedError extends Kind.RejectedError<RejectedCode> {}

/** A dependency (mail) failed; nothing was left half done. */
export class UnavailableError extends Kind.UnavailableError<UnavailableCode> {}

export type DomainError = NotFoundError | IllegalStateError | RejectedError | UnavailableError;

export function isDomainError(err: unknown): err is DomainError {
  return (
    err instanceof NotFoundError ||
    err instanceof IllegalStateError ||
    err instanceof RejectedError ||
    err instanceof UnavailableError
  );
}
