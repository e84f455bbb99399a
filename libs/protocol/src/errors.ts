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
  /** Runtimes (docs/runtimes.md): the same name with other settings (409). */
  runtimeExists: 'RUNTIME_EXISTS',
  /** A ninth runtime for one account (429). */
  runtimeLimitReached: 'RUNTIME_LIMIT_REACHED',
  /** Configure with a version that is not the runtime's current one (409). */
  versionConflict: 'VERSION_CONFLICT',
  /** Heartbeat or finish by a worker whose lease ran out or was taken over (409). */
  leaseLost: 'LEASE_LOST',
  /** A lease finished once, finished again with another body (409). */
  finishConflict: 'FINISH_CONFLICT',
  /** A runtime job whose decision was settled elsewhere (ADR 0032): nothing more to do. */
  jobSuperseded: 'JOB_SUPERSEDED',
  /** A finish outcome the server does not carry out yet (501). */
  outcomeNotSupported: 'OUTCOME_NOT_SUPPORTED',
  /** A claim on a runtime whose jobs are pushed to its endpoint (409). */
  runtimeHasEndpoint: 'RUNTIME_HAS_ENDPOINT',
  /** Verify on a runtime without an endpoint (409). */
  runtimeWithoutEndpoint: 'RUNTIME_WITHOUT_ENDPOINT',
  /** The endpoint did not echo the challenge (422); the runtime stays `unverified`. */
  verificationFailed: 'VERIFICATION_FAILED',
  /** Revisions (docs/sealed-messages.md): the other side's message (403). */
  messageNotYours: 'MESSAGE_NOT_YOURS',
  /** Revisions: an unknown or withdrawn message (404). */
  messageNotFound: 'MESSAGE_NOT_FOUND',
  /** Revisions: more than 24 hours after the message's createdAt (409). */
  revisionWindowClosed: 'REVISION_WINDOW_CLOSED',
  /** Revisions: an eleventh correction (409). */
  revisionLimit: 'REVISION_LIMIT',
  /** Sealed messages (docs/sealed-messages.md): a key the caller never published (404). */
  keyNotFound: 'KEY_NOT_FOUND',
  /** A keyId taken by another key, retired, or a public key already under another keyId (409). */
  keyIdInUse: 'KEY_ID_IN_USE',
  /** A ninth current device key (409). */
  tooManyKeys: 'TOO_MANY_KEYS',
  /** A sealed recipient that is not a current key of one of the two sides, or named twice (400). */
  sealedRecipientUnknown: 'SEALED_RECIPIENT_UNKNOWN',
  /** A current key of the receiving side not among the recipients, without `allowMissing` (409). */
  sealedRecipientsMissing: 'SEALED_RECIPIENTS_MISSING',
  /** A sealed message to a side without a current key (409). */
  recipientHasNoKey: 'RECIPIENT_HAS_NO_KEY',
  /** A `clientMessageId` sent again with another body (409). */
  clientMessageIdReused: 'CLIENT_MESSAGE_ID_REUSED',
} as const;

export const ErrorKeys = {
  disposableEmailNotAllowed: 'errors.disposableEmailNotAllowed',
  invalidPairingCode: 'errors.invalidPairingCode',
  realmNotAllowed: 'errors.realmNotAllowed',
} as const;
