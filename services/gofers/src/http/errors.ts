import { forbidden, notFound, rateLimited, validation, type HttpError } from '@oan/http';
import { isDomainError, type DomainError } from '../domain/errors.ts';

/** The one place where the gofers context's coded errors become statuses and `{error, code}` bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'GOFER_FORBIDDEN':
      // Probe-safe: one body for unknown, deleted and foreign Gofers, whatever the route asked.
      return forbidden();
    case 'GOFER_NOT_FOUND':
      return notFound('Gofer not found'); // only DELETE of an unknown Gofer is a 404
    case 'ATTACHMENT_NOT_FOUND':
      return notFound('Attachment not found');
    case 'MESSAGE_EMPTY':
    case 'TOO_MANY_ATTACHMENTS':
    case 'ATTACHMENTS_UNAVAILABLE':
    case 'ATTACHMENT_UNKNOWN':
    case 'PHOTO_ALREADY_USED':
      return validation(err.message); // every refusal of a chat message is a 400
    case 'OWNER_QUESTIONS_FULL':
      return rateLimited(err.message); // no route asks the owner today; the A2A side maps its own
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
