import { ErrorCodes, type ErrorBody } from '@oan/protocol';

/** A coded failure mapped in one place (the error handler) to its status and `{error, code}` body. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: string;
  constructor(statusCode: number, code: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.name = 'HttpError';
  }

  body(): ErrorBody {
    return { error: this.message, code: this.code };
  }
}

// 401 texts contain "Unauthorized" so connectors classify dead credentials as terminal.
export const unauthorized = (message = 'Unauthorized') =>
  new HttpError(401, ErrorCodes.unauthorized, message);
export const forbidden = (message = 'Forbidden') => new HttpError(403, ErrorCodes.forbidden, message);
export const notFound = (message = 'Not Found') => new HttpError(404, ErrorCodes.notFound, message);
export const validation = (message: string) => new HttpError(400, ErrorCodes.validation, message);
export const badRequest = (message: string) => new HttpError(400, ErrorCodes.badRequest, message);
export const rateLimited = (message = 'Too many requests') =>
  new HttpError(429, ErrorCodes.rateLimited, message);
export const unavailable = (message = 'Service temporarily unavailable') =>
  new HttpError(503, ErrorCodes.unavailable, message);
