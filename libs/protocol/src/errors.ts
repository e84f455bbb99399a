/** The error body of every non-2xx answer (§0.3). */
export interface ErrorBody {
  error: string;
  code: string;
}

/** Codes of §5.1 plus the `errors.*` keys of §5.2 (carried in `error`). */
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
  /** Issue 15: an `Idempotency-Key` reused with another request (422). */
  idempotencyKeyReused: 'IDEMPOTENCY_KEY_REUSED',
  /** Issue 15: an `Idempotency-Key` whose first request is still in flight (409). */
  idempotencyKeyInUse: 'IDEMPOTENCY_KEY_IN_USE',
  /** Issue 15: a fourth webhook endpoint for one account (409). */
  webhookLimitReached: 'WEBHOOK_LIMIT_REACHED',
} as const;

export const ErrorKeys = {
  disposableEmailNotAllowed: 'errors.disposableEmailNotAllowed',
  invalidPairingCode: 'errors.invalidPairingCode',
  realmNotAllowed: 'errors.realmNotAllowed',
} as const;
