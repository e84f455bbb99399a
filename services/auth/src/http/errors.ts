import {
  forbidden,
  HttpError,
  notFound,
  rateLimited,
  unauthorized,
  unavailable,
  validation,
} from '@oan/http';
import { ErrorCodes, ErrorKeys } from '@oan/protocol';
import { accountBanned } from '@oan/auth';
import { isDomainError, type DomainError } from '../domain/errors.ts';

/** The one place where the auth context's coded errors become statuses and `{error, code}` bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'ACCOUNT_NOT_FOUND':
      return notFound('Account not found');
    case 'API_KEY_NOT_FOUND':
      return forbidden(); // unknown and foreign keys get the byte-identical 403
    case 'ACCOUNT_BANNED':
      return accountBanned(); // 403 on every authenticated route
    case 'PAIRING_CODE_INVALID':
      return new HttpError(401, ErrorCodes.unauthorized, ErrorKeys.invalidPairingCode); // one body for every bad code
    case 'PAIRING_CODE_TAKEN':
      return new HttpError(500, ErrorCodes.internal, 'Internal error');
    case 'EMAIL_CODE_INVALID':
      return unauthorized('Unauthorized: invalid or expired code'); // 401, as connectors expect
    case 'EMAIL_COOLDOWN':
    case 'TOO_MANY_FAILED_ATTEMPTS':
      return rateLimited(err.message); // resend cooldown: 429
    case 'DISPOSABLE_EMAIL':
      return validation(ErrorKeys.disposableEmailNotAllowed);
    case 'GOOGLE_NOT_CONFIGURED':
      return validation('Google sign-in is not configured on this server'); // a 400, not a 5xx
    case 'GOOGLE_TOKEN_INVALID':
      return unauthorized('Unauthorized: invalid Google token');
    case 'MAIL_UNAVAILABLE':
      return unavailable(err.message);
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
