/** The error body of every non-2xx answer. */
export interface ErrorBody {
  error: string;
  code: string;
}

/** The protocol's error codes plus its `errors.*` message keys (carried in `error`). */
export const ErrorCodes = {
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  validation: 'VALIDATION_ERROR',
  internal: 'INTERNAL_ERROR',
  request: 'REQUEST_ERROR',
  badRequest: 'BAD_REQUEST',
  unsupportedMime: 'UNSUPPORTED_MIME',
  rateLimited: 'RATE_LIMITED',
  payloadTooLarge: 'PAYLOAD_TOO_LARGE',
  unavailable: 'SERVICE_UNAVAILABLE',
  /** An `Idempotency-Key` reused with another request (422). */
  idempotencyKeyReused: 'IDEMPOTENCY_KEY_REUSED',
  /** An `Idempotency-Key` whose first request is still in flight (409). */
  idempotencyKeyInUse: 'IDEMPOTENCY_KEY_IN_USE',
  /** A fourth webhook endpoint for one account (409). */
  webhookLimitReached: 'WEBHOOK_LIMIT_REACHED',
} as const;

export const ErrorKeys = {
  disposableEmailNotAllowed: 'errors.disposableEmailNotAllowed',
  invalidPairingCode: 'errors.invalidPairingCode',
  realmNotAllowed: 'errors.realmNotAllowed',
} as const;
