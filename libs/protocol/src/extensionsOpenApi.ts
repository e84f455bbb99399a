import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_RETENTION_SECONDS } from './constants';
import { ErrorCodes } from './errors';

/**
 * The OpenAPI description of what the edge adds to every route (issue 15,
 * docs/connectors-without-socket.md): components, plus what every POST and every operation of
 * /api/v1 gains. The merge of the services' documents applies it (libs/testing, `npm run openapi`).
 */
export interface ExtensionsOpenApi {
  components: Record<string, Record<string, unknown>>;
  /** Added to every POST under /api/v1. */
  everyPost: { parameters: unknown[]; responses: Record<string, unknown> };
}

const errorBody = (description: string, code: string) => ({
  description,
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
  components: {
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
    },
  },
  everyPost: {
    parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }],
    responses: {
      '409': { $ref: '#/components/responses/IdempotencyKeyInUse' },
      '422': { $ref: '#/components/responses/IdempotencyKeyReused' },
    },
  },
};
