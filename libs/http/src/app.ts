import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from 'fastify';
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
import { HttpError } from './errors.ts';
import { createLogger, loggableError } from './logger.ts';

export interface HttpAppOptions {
  name: string;
  logLevel?: string;
  bodyLimit?: number;
  /** Checks run by `GET /ready`; each throws when its dependency is not usable. */
  readiness?: Record<string, () => Promise<unknown>>;
  /** Expose `/metrics` (Prometheus). Default true. */
  metrics?: boolean;
  /**
   * Collect the metrics without the `/metrics` route (default true: with it). The edge's port is the
   * public origin: it serves them on a listener of its own instead.
   */
  metricsRoute?: boolean;
  fastify?: Partial<FastifyServerOptions>;
  /**
   * Describe this service's routes (zod schemas → OpenAPI 3 via @fastify/swagger); served on the
   * service's own port as `GET /openapi.json`. `npm run openapi` merges them into docs/openapi.json.
   */
  openapi?: { title: string; description?: string };
  /** Fields `GET /health` answers beside `status` (the gateway's id, for the edge's discovery). */
  health?: Record<string, string>;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Postgres SQLSTATEs of a server that is going away or refusing (classes 08, 57P, 53; 55000 for
 * `allow_connections false`), and Node's network errors. */
const DOWN_SQLSTATE = /^(08|57P0|53)/;
const DOWN_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);
/**
 * ioredis's closed connection; node-postgres's broken or ended client (no code on either); knex's
 * transaction whose connection died between two of its queries (the server ended the session while
 * the transaction waited on the application, so the next query finds it already rolled back).
 */
const DOWN_MESSAGE =
  /(^Connection is closed\.?$|Client has encountered a connection error|Connection terminated|Client was closed|^Transaction query already complete)/;
const DOWN_NAMES = new Set([
  'ConnectionException',
  'MaxRetriesPerRequestError',
  'KafkaJSConnectionError',
  // The pool could not hand out a connection in time (the server is not answering).
  'KnexTimeoutError',
]);

/** An AbortError from the proxy or a body stream: the client closed the request first. */
const isClientGone = (err: unknown) =>
  typeof err === 'object' &&
  err !== null &&
  ((err as { name?: unknown }).name === 'AbortError' ||
    (err as { code?: unknown }).code === 'UND_ERR_ABORTED');

/** Whether `err` (or a cause) says a dependency (Postgres, Redis, Kafka) is unreachable right now. */
export function isDependencyDown(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const { code, sqlState, name, message } = e as Record<string, unknown>;
    const state = typeof sqlState === 'string' ? sqlState : typeof code === 'string' ? code : '';
    if (DOWN_SQLSTATE.test(state) || state === '55000' || DOWN_ERRNO.has(state)) return true;
    if (typeof name === 'string' && DOWN_NAMES.has(name)) return true;
    if (typeof message === 'string' && DOWN_MESSAGE.test(message)) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}

/** Longer than any id; the routes refuse implausible ids themselves. */
const MAX_PARAM_LENGTH = 16 * 1024;

/**
 * The first string (value or key) in a parsed JSON document that cannot be stored as text, described,
 * or null. Iterative, so a deeply nested document cannot exhaust the stack.
 */
export function findUnstorableString(doc: unknown): string | null {
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'strings must not contain NUL characters';
      if (LONE_SURROGATE.test(v)) return 'strings must be valid Unicode (a lone surrogate was found)';
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push(k, x);
    }
  }
  return null;
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/** Fastify's clientErrorHandler with the `{error, code}` body (the default has its own shape). */
function writeClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({ error: `${text}: malformed HTTP request`, code: ErrorCodes.request });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
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
    // clients do not strip a trailing slash from baseUrl, so `//api/v1/...` must work.
    rewriteUrl: (req) => collapseSlashes(req.url ?? '/'),
    // An id of any length reaches its route, which answers it as unknown (403/404, never a 414).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Requests the router cannot take (bad percent-encoding) get the error body too.
    frameworkErrors: (err, _req, reply) => {
      void (reply as FastifyReply)
        .status(400)
        .send({ error: `Malformed URL (${err.code})`, code: ErrorCodes.request });
    },
    // Requests Node's HTTP parser refuses (bad framing, oversized headers) get the error body too.
    clientErrorHandler: writeClientError,
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

  // a JSON content type with an empty body is an empty body, not an error.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch {
      return done(new HttpError(400, ErrorCodes.request, 'Request body is not valid JSON'), undefined);
    }
    // Text we store must be storable: Postgres takes neither NUL nor a lone surrogate (`"\ud800"`).
    const bad = findUnstorableString(parsed);
    if (bad) return done(new HttpError(400, ErrorCodes.validation, `Invalid body: ${bad}`), undefined);
    done(null, parsed);
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
    if (isClientGone(err)) {
      // The client went away before the answer (an aborted upload, a proxied request cut): no one
      // reads this reply, and it is not a server fault.
      req.log.info({ reqId: req.id }, 'client went away');
      return reply.status(400).send({ error: 'Request aborted', code: ErrorCodes.request });
    }
    if (isDependencyDown(err)) {
      // A dependency is down or restarting: the client may retry; nothing was half done.
      req.log.warn({ err: loggableError(err), reqId: req.id }, 'dependency unavailable');
      return reply
        .status(503)
        .send({ error: 'Service temporarily unavailable', code: ErrorCodes.unavailable });
    }
    // Never a stack trace to the client; the log line carries the trace id (reqId).
    req.log.error({ err: loggableError(err), reqId: req.id }, 'unhandled error');
    return reply.status(500).send({ error: `Internal error (trace ${req.id})`, code: ErrorCodes.internal });
  });

  app.setNotFoundHandler((_req, reply) =>
    reply.status(404).send({ error: 'Not Found', code: ErrorCodes.notFound }),
  );

  app.get('/health', { schema: { hide: true } }, async () => ({ ...opts.health, status: 'ok' }));
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
      endpoint: opts.metricsRoute === false ? null : '/metrics',
      // The event-loop delay is sampled every 100 ms, not prom-client's 10 ms: the 10 ms timer alone
      // cost an idle process about 6 ms of CPU a second (ADR 0047).
      defaultMetrics: { enabled: true, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS },
      routeMetrics: { enabled: true, routeBlacklist: ['/metrics', '/health', '/ready'] },
    });
  }
  return app;
}

let metricsTaken = false;

/** How often the event-loop delay histogram (`nodejs_eventloop_lag_*`) samples, in ms. */
export const EVENT_LOOP_SAMPLE_MS = 100;

export function collapseSlashes(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const rest = q === -1 ? '' : url.slice(q);
  return path.replace(/\/{2,}/g, '/') + rest;
}
