import { badRequest, forbidden, notFound, validation, type HttpError } from '@oan/http';
import { isDomainError, NOT_WAITING_FOR_CONFIRMATION, type DomainError } from '../domain/errors.ts';

/** The one place where the matching context's coded errors become statuses and `{error, code}` bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'THREAD_NOT_FOUND':
      // Thread routes: unknown thread. `POST /match-requests`: unknown thread, or a thread/Gofer not
      // the caller's (404 for both).
      return notFound('Thread not found');
    case 'ATTACHMENT_NOT_FOUND':
      // Counterpart-attachment URL: unknown, deleted and not-the-counterpart's are one final 404
      // (clients never retry).
      return notFound('Attachment not found');
    case 'THREAD_FORBIDDEN':
      // The thread exists but the caller's Gofer is not in it (frozen, not probe-safe).
      return forbidden();
    case 'MATCH_REQUEST_FORBIDDEN':
      // Probe-safe: one body for an unknown request and a caller who is not its recipient.
      return forbidden();
    case 'THREAD_NOT_AWAITING_CONFIRMATION':
      // The engine matches this text on a failed pair/confirm and treats the answer as "already paired".
      return badRequest(NOT_WAITING_FOR_CONFIRMATION);
    case 'THREAD_NOT_ACTIVE':
    case 'THREAD_CLOSED':
    case 'SESSION_NOT_ENDED':
    case 'SESSION_FULL':
    case 'SESSION_TURN_OUT_OF_ORDER':
    case 'MATCH_REQUEST_ALREADY_DECIDED':
      return badRequest(err.message);
    case 'SAME_GOFER':
    case 'SAME_ACCOUNT':
    case 'NOT_A_PARTICIPANT':
      return validation(err.message);
    default: {
      const unexpected: never = err;
      return unexpected;
    }
  }
}

/** For a plugin's error handler: domain errors are mapped, everything else goes up unchanged. */
export function rethrowMapped(err: unknown): never {
  throw isDomainError(err) ? toHttpError(err) : err;
}
