import { HttpError, notFound } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import { isDomainError, type DomainError } from '../domain/errors.ts';

/** The one place where the runtimes context's coded errors become statuses and `{error, code}` bodies. */
export function toHttpError(err: DomainError): HttpError {
  switch (err.code) {
    case 'RUNTIME_NOT_FOUND':
      // Probe-safe: one body for unknown, deleted, malformed and another account's runtime ids.
      return notFound('Runtime not found');
    case 'JOB_NOT_FOUND':
      return notFound('Job not found');
    case 'RUNTIME_EXISTS':
      return new HttpError(409, ErrorCodes.runtimeExists, err.message);
    case 'VERSION_CONFLICT':
      return new HttpError(409, ErrorCodes.versionConflict, err.message);
    case 'LEASE_LOST':
      return new HttpError(409, ErrorCodes.leaseLost, err.message);
    case 'FINISH_CONFLICT':
      return new HttpError(409, ErrorCodes.finishConflict, err.message);
    case 'RUNTIME_HAS_ENDPOINT':
      return new HttpError(409, ErrorCodes.runtimeHasEndpoint, err.message);
    case 'RUNTIME_WITHOUT_ENDPOINT':
      return new HttpError(409, ErrorCodes.runtimeWithoutEndpoint, err.message);
    case 'VERIFICATION_FAILED':
      return new HttpError(422, ErrorCodes.verificationFailed, err.message);
    case 'JOB_SUPERSEDED':
      return new HttpError(409, ErrorCodes.jobSuperseded, err.message);
    case 'RUNTIME_LIMIT_REACHED':
      return new HttpError(429, ErrorCodes.runtimeLimitReached, err.message);
    case 'OUTCOME_NOT_SUPPORTED':
      return new HttpError(501, ErrorCodes.outcomeNotSupported, err.message);
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
