import { forbidden, notFound, validation, type HttpError } from '@oan/http';
import { isDomainError, type DomainError } from '../domain/errors.ts';

/** The one place where the conversations context's coded errors become statuses and bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'CONVERSATION_FORBIDDEN':
      // one byte-identical 403 body for unknown, closed and foreign conversations.
      return forbidden();
    case 'MESSAGE_NOT_YOURS':
      return forbidden(err.message);
    case 'ATTACHMENT_NOT_FOUND':
      // signed URL: unknown, deleted and another conversation's are one final 404.
      return notFound('Attachment not found');
    case 'MESSAGE_NOT_FOUND':
      return notFound('Message not found');
    case 'MESSAGE_EMPTY':
    case 'MESSAGE_TOO_LONG':
    case 'TOO_MANY_ATTACHMENTS':
    case 'DUPLICATE_ATTACHMENT':
    case 'ATTACHMENT_UNUSABLE':
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
