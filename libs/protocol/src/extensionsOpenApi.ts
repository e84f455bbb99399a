import { z } from 'zod';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_RETENTION_SECONDS } from './constants.ts';
import { ErrorCodes } from './errors.ts';
import { limitsResponse } from './limits.ts';

/**
 * The OpenAPI description of what the edge adds to every route (
 * docs/connectors-without-socket.md): components, plus what every POST and every operation of
 * /api/v1 gains. The merge of the services' documents applies it (libs/testing, `npm run openapi`).
 */
export interface ExtensionsOpenApi {
  /** Routes the edge serves itself. */
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  /** Added to every POST under /api/v1: the parameter, responses, and headers of each 2xx response. */
  everyPost: {
    parameters: unknown[];
    responses: Record<string, unknown>;
    successHeaders: Record<string, unknown>;
  };
  /** Added to every operation under /api/v1: responses, and headers of each 2xx response. */
  everyOperation: { responses: Record<string, unknown>; successHeaders: Record<string, unknown> };
}

const LIMITS_ON =
  'Sent on authenticated answers when the server sets RATE_LIMIT_PER_MINUTE (off by default).';

const errorBody = (description: string, code: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: { error: { type: 'string' }, code: { type: 'string', enum: [code] } },
        required: ['error', 'code'],
      },
    },
  },
});

export const extensionsOpenApi: ExtensionsOpenApi = {
  paths: {
    '/api/v1/limits': {
      get: {
        summary: "The caller's account's own limits and usage (an extension to protocol v1)",
        security: [{ bearer: [] }],
        responses: {
          '200': {
            description: 'rateLimit is null when the server sets no rate limit',
            content: {
              'application/json': { schema: z.toJSONSchema(limitsResponse, { target: 'openapi-3.0' }) },
            },
          },
        },
      },
    },
  },
  components: {
    headers: {
      'RateLimit-Limit': {
        description: `Requests per minute allowed to the account. ${LIMITS_ON}`,
        schema: { type: 'integer' },
      },
      'RateLimit-Remaining': {
        description: `Requests left in the current window. ${LIMITS_ON}`,
        schema: { type: 'integer' },
      },
      'RateLimit-Reset': {
        description: `Seconds until the window ends. ${LIMITS_ON}`,
        schema: { type: 'integer' },
      },
      'Idempotent-Replayed': {
        description: '`true` on an answer replayed for a repeated Idempotency-Key (absent otherwise).',
        schema: { type: 'string', enum: ['true'] },
      },
      'Retry-After': { description: 'Seconds to wait before the next request.', schema: { type: 'integer' } },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Optional (IETF httpapi idempotency-key-header draft): a structured-field string ("…") or a bare ' +
          `key of printable ASCII, 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters, unique per intended request. ` +
          `For ${IDEMPOTENCY_RETENTION_SECONDS / 3600} h the same key, account and request answer the first ` +
          'final answer again (status, body, content type; header Idempotent-Replayed: true) without a second ' +
          'effect; a 5xx is not kept. Honoured for authenticated requests (an API key and a JWT of one account ' +
          'share keys); ignored without a valid credential. A malformed key is a 400 VALIDATION_ERROR.',
        schema: { type: 'string' },
      },
    },
    responses: {
      IdempotencyKeyInUse: errorBody(
        'The first request with this Idempotency-Key is still in flight; retry later.',
        ErrorCodes.idempotencyKeyInUse,
      ),
      IdempotencyKeyReused: errorBody(
        'This Idempotency-Key was used with another request (method, path, body).',
        ErrorCodes.idempotencyKeyReused,
      ),
      RateLimited: errorBody(
        `The account used up its requests for this window. ${LIMITS_ON}`,
        ErrorCodes.rateLimited,
        {
          'Idempotent-Replayed': {
            description: '`true` on an answer replayed for a repeated Idempotency-Key (absent otherwise).',
            schema: { type: 'string', enum: ['true'] },
          },
          'Retry-After': { $ref: '#/components/headers/Retry-After' },
          'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
          'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
          'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
        },
      ),
    },
  },
  everyPost: {
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    responses: {
      '409': { $ref: '#/components/responses/IdempotencyKeyInUse' },
      '422': { $ref: '#/components/responses/IdempotencyKeyReused' },
    },
    successHeaders: { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } },
  },
  everyOperation: {
    responses: { '429': { $ref: '#/components/responses/RateLimited' } },
    successHeaders: {
      'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
      'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
      'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
    },
  },
};
