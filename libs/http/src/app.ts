import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import metricsPlugin from 'fastify-metrics';
import swagger from '@fastify/swagger';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
  hasZodFastifySchemaValidationErrors,
} from 'fastify-type-provider-zod';
import { ErrorCodes } from '@oan/protocol';
import { HttpError } from './errors';
import { createLogger, loggableError } from './logger';

export interface HttpAppOptions {
  name: string;
  logLevel?: string;
  bodyLimit?: number;
  /** Checks run by `GET /ready`; each throws when its dependency is not usable. */
  readiness?: Record<string, () => Promise<unknown>>;
  /** Expose `/metrics` (Prometheus). Default true. */
  metrics?: boolean;
  fastify?: Partial<FastifyServerOptions>;
  /**
   * Describe this service's routes (zod schemas → OpenAPI 3 via @fastify/swagger); served on the
   * service's own port as `GET /openapi.json`. `npm run openapi` merges them into docs/openapi.json.
   */
  openapi?: { title: string; description?: string };
}

export type HttpApp = FastifyInstance & { withTypeProvider(): FastifyInstance };

/** The Fastify factory every service uses: one error body, request ids, health, readiness, metrics. */
export async function createHttpApp(opts: HttpAppOptions) {
  const app = Fastify({
    loggerInstance: createLogger(opts.name, opts.logLevel ?? 'info'),
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : randomUUID();
    },
    // §0.1: clients do not strip a trailing slash from baseUrl, so `//api/v1/...` must work.
    rewriteUrl: (req) => collapseSlashes(req.url ?? '/'),
    ...opts.fastify,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  if (opts.openapi) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: { title: opts.openapi.title, version: '1', description: opts.openapi.description ?? '' },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      },
      transform: jsonSchemaTransform,
      hideUntagged: false,
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  }

  // A31: a JSON content type with an empty body is an empty body, not an error.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text) as unknown);
    } catch {
      done(new HttpError(400, ErrorCodes.request, 'Request body is not valid JSON'), undefined);
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id);
    return payload;
  });

  app.setErrorHandler((err: FastifyError | HttpError, req, reply) => {
    if (err instanceof HttpError) return reply.status(err.statusCode).send(err.body());
    if (hasZodFastifySchemaValidationErrors(err)) {
      const detail = err.validation
        .map((v) => `${v.instancePath || '/'} ${v.message ?? 'is invalid'}`)
        .join('; ');
      return reply.status(400).send({
        error: `Invalid ${err.validationContext ?? 'request'}: ${detail}`,
        code: ErrorCodes.validation,
      });
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status === 413)
      return reply.status(413).send({ error: 'Payload too large', code: ErrorCodes.payloadTooLarge });
    if (status === 415)
      return reply.status(415).send({ error: 'Unsupported media type', code: ErrorCodes.request });
    if (status >= 400 && status < 500) {
      return reply.status(status).send({ error: err.message, code: ErrorCodes.request });
    }
    // Never a stack trace to the client; the log line carries the trace id (reqId).
    req.log.error({ err: loggableError(err), reqId: req.id }, 'unhandled error');
    return reply.status(500).send({ error: `Internal error (trace ${req.id})`, code: ErrorCodes.internal });
  });

  app.setNotFoundHandler((_req, reply) =>
    reply.status(404).send({ error: 'Not Found', code: ErrorCodes.notFound }),
  );

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    const checks = Object.entries(opts.readiness ?? {});
    const results = await Promise.all(
      checks.map(async ([name, check]) => {
        try {
          await check();
          return [name, 'ok'] as const;
        } catch {
          return [name, 'down'] as const;
        }
      }),
    );
    const down = results.filter(([, s]) => s === 'down');
    if (down.length > 0) {
      return reply
        .status(503)
        .send({ error: `Not ready: ${down.map(([n]) => n).join(', ')}`, code: ErrorCodes.unavailable });
    }
    return { status: 'ok', checks: Object.fromEntries(results) };
  });

  // prom-client's registry is per process and the plugin's metric names are fixed: the first app of
  // a process exposes them; a second app in the same process (tests) goes without.
  if (opts.metrics !== false && !metricsTaken) {
    metricsTaken = true;
    await app.register(metricsPlugin, {
      endpoint: '/metrics',
      defaultMetrics: { enabled: true },
      routeMetrics: { enabled: true, routeBlacklist: ['/metrics', '/health', '/ready'] },
    });
  }
  return app;
}

let metricsTaken = false;

export function collapseSlashes(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const rest = q === -1 ? '' : url.slice(q);
  return path.replace(/\/{2,}/g, '/') + rest;
}
