import { forbidden, HttpError, notFound, validation } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import { isDomainError, type DomainError } from '../domain/errors.ts';

/** The one place where the conversations context's coded errors become statuses and bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'CONVERSATION_FORBIDDEN':
      // one byte-identical 403 body for unknown, closed and foreign conversations.
      return forbidden();
    case 'MESSAGE_NOT_YOURS':
      return new HttpError(403, ErrorCodes.messageNotYours, err.message);
    case 'ATTACHMENT_NOT_FOUND':
      // signed URL: unknown, deleted and another conversation's are one final 404.
      return notFound('Attachment not found');
    case 'MESSAGE_NOT_FOUND':
      return new HttpError(404, ErrorCodes.messageNotFound, 'Message not found');
    case 'REVISION_WINDOW_CLOSED':
      return new HttpError(409, ErrorCodes.revisionWindowClosed, err.message);
    case 'REVISION_LIMIT':
      return new HttpError(409, ErrorCodes.revisionLimit, err.message);
    case 'KEY_NOT_FOUND':
      // one body for another account's key and one nobody published.
      return new HttpError(404, ErrorCodes.keyNotFound, 'Key not found');
    case 'MESSAGE_EMPTY':
    case 'MESSAGE_TOO_LONG':
    case 'TOO_MANY_ATTACHMENTS':
    case 'DUPLICATE_ATTACHMENT':
    case 'ATTACHMENT_UNUSABLE':
    case 'REVISION_KIND_MISMATCH':
    case 'SEALED_INVALID':
    case 'SEALED_WITH_CONTENT':
      return validation(err.message);
    case 'SEALED_RECIPIENT_UNKNOWN':
      return new HttpError(400, ErrorCodes.sealedRecipientUnknown, err.message);
    case 'KEY_ID_IN_USE':
      return new HttpError(409, ErrorCodes.keyIdInUse, err.message);
    case 'TOO_MANY_KEYS':
      return new HttpError(409, ErrorCodes.tooManyKeys, err.message);
    case 'SEALED_RECIPIENTS_MISSING':
      return new HttpError(409, ErrorCodes.sealedRecipientsMissing, err.message);
    case 'RECIPIENT_HAS_NO_KEY':
      return new HttpError(409, ErrorCodes.recipientHasNoKey, err.message);
    case 'CLIENT_MESSAGE_ID_REUSED':
      return new HttpError(409, ErrorCodes.clientMessageIdReused, err.message);
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

/**
 * The recall route (DELETE, older than revisions) keeps its v1 bodies: the other side's message is
 * the plain 403 FORBIDDEN, an unknown or withdrawn one the plain 404 NOT_FOUND.
 */
export function rethrowMappedForRecall(err: unknown): never {
  if (isDomainError(err) && err.code === 'MESSAGE_NOT_YOURS')
    throw forbidden('Only the sender may recall a message');
  if (isDomainError(err) && err.code === 'MESSAGE_NOT_FOUND') throw notFound('Message not found');
  return rethrowMapped(err);
}
