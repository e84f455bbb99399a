import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import httpProxy, { type FastifyHttpProxyOptions } from '@fastify/http-proxy';
import { COMMAND_ID_HEADER, INTERNAL_CALL_HEADER } from '@oan/auth';
import { ErrorCodes } from '@oan/protocol';
import { TOO_LARGE, isBodyTooLarge, limitedBody, refuseDeclaredOverLimit } from './bodyLimit.ts';
import { Agent } from 'undici';
import type { Idempotency, Upstream } from './idempotency/index.ts';
import type { ReleasingDispatcher } from './releasing.ts';

export interface ProxyRoute {
  prefix: string;
  /** A fixed upstream, or a choice per request (HTTP and WebSocket alike). */
  upstream: string | ((req: FastifyRequest) => string);
  websocket?: boolean;
  /**
   * With `websocket`: the largest client frame, the upstream's own limit. A larger one closes the
   * client's socket with 1009 at the edge, which otherwise buffers up to the `ws` default 100 MiB.
   */
  maxFrameBytes?: number;
  /**
   * For GET/HEAD only: another upstream to try after a connection-level failure (refused, reset
   * before a response). `GET /events` must stay available while a gateway restarts (a failed
   * backfill loses events for the SDK), so a dead gateway costs a retry, not an error.
   */
  failover?: (failed: string) => string | undefined;
  /** The largest body the upstream accepts for this request; larger ones are a 413 here. */
  bodyLimit?: (req: FastifyRequest) => number;
  /**
   * The most connections to each upstream origin (default reply-from's 128); a request beyond them
   * waits for a free one. Unused with `dispatcher` or `pool`, which bound their own.
   */
  connections?: number;
  /** The upstream dispatcher when not reply-from's own (the gateways': long-polls, releasing.ts). */
  dispatcher?: ReleasingDispatcher;
  /** A service's replicas (upstreams.ts): they choose where each request goes, and retry only what was never sent. */
  pool?: Upstream;
  /** `Idempotency-Key` on the route's POSTs (a connector extension): its check, and its recording dispatcher. */
  idempotency?: Idempotency;
}

/** The dispatcher reply-from would build itself (its getUndiciOptions), with our bound on connections. */
const boundedAgent = (connections = 128): Upstream => new Agent({ pipelining: 1, connections });

type ReplyOptions = NonNullable<FastifyHttpProxyOptions['replyOptions']>;
type OnError = NonNullable<ReplyOptions['onError']>;
type Headers = Parameters<NonNullable<ReplyOptions['rewriteRequestHeaders']>>[1];
type AnyRequest = Parameters<NonNullable<ReplyOptions['getUpstream']>>[0];

/**
 * Headers the upstream needs to correlate and attribute a request. `X-Forwarded-For` is replaced by
 * the address this edge saw, never appended to: the services key their limits on it (auth's failed
 * codes, the relay's lookups) and a client must not write the hop they believe.
 */
function forwarded<H extends Headers>(req: AnyRequest, headers: H): H {
  const out = { ...headers, 'x-request-id': req.id, 'x-forwarded-for': req.ip };
  // The fleet's own call headers never come from outside (a stranger cannot know the internal
  // secret, but the edge does not even pass the attempt on).
  for (const name of FLEET_ONLY) delete out[name];
  return out;
}

/** Headers only the fleet's processes send one another (libs/auth internalCall.ts). */
const FLEET_ONLY = [INTERNAL_CALL_HEADER, COMMAND_ID_HEADER] as const;

/**
 * Hop-by-hop fields (RFC 9110 §7.6.1) the edge does not pass on: undici refuses to send `expect`,
 * `keep-alive` and `upgrade` (the request would fail as a 503), and this edge's own server has
 * already answered `Expect: 100-continue` to the client. `connection` and the fields it names are
 * dropped by reply-from, `transfer-encoding` by undici.
 */
const HOP_BY_HOP = ['expect', 'keep-alive', 'proxy-connection', 'te', 'upgrade'] as const;

/** The headers of a proxied HTTP request (WebSocket upgrades take `forwarded` alone). */
function upstreamHeaders(req: AnyRequest, headers: Headers): Headers {
  const out = forwarded(req, headers);
  for (const name of HOP_BY_HOP) delete out[name];
  return out;
}

/**
 * A body cut at its limit (bodyLimit.ts) is a 413. Any other failure to reach the upstream
 * (refused, reset, timeout) is a 503 with the usual `{ error, code }` JSON error body.
 */
const upstreamFailed: OnError = (reply, { error }) => {
  if (reply.raw.destroyed) {
    // The client went away first (a released long-poll): nobody reads an answer, nothing failed.
    reply.log.info('client went away before the upstream answered');
    return;
  }
  if (isBodyTooLarge(error)) {
    void reply.status(413).send(TOO_LARGE);
    return;
  }
  reply.log.warn({ err: error }, 'upstream unavailable');
  void reply.status(503).send({ error: 'Service temporarily unavailable', code: ErrorCodes.unavailable });
};

const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'FST_REPLY_FROM_INTERNAL_SERVER_ERROR',
]);
function isConnectionFailure(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return CONNECTION_FAILURES.has(String(e?.code)) || CONNECTION_FAILURES.has(String(e?.cause?.code));
}

/** An onError that retries an idempotent request on the next upstream, then gives up with 503. */
function withFailover(
  route: ProxyRoute,
  pick: (req: FastifyRequest) => string,
  headersOf: typeof upstreamHeaders,
): OnError {
  const maxAttempts = 3;
  const handler: OnError = (reply, ctx) => {
    const req = reply.request as FastifyRequest & { oanAttempt?: { upstream: string; n: number } };
    const attempt = req.oanAttempt ?? { upstream: pick(req), n: 1 };
    const next = route.failover?.(attempt.upstream);
    const idempotent = req.method === 'GET' || req.method === 'HEAD';
    const retry = idempotent && next && attempt.n < maxAttempts && isConnectionFailure(ctx.error);
    // A client that went away is not retried for (its abort surfaces as a failed request).
    if (!retry || isBodyTooLarge(ctx.error) || reply.sent || reply.raw.destroyed) {
      upstreamFailed(reply, ctx);
      return;
    }
    req.oanAttempt = { upstream: next, n: attempt.n + 1 };
    reply.log.warn({ failed: attempt.upstream, next }, 'upstream unavailable, retrying on another');
    try {
      void reply.from(req.url, {
        getUpstream: () => next,
        rewriteRequestHeaders: headersOf,
        onError: handler,
      });
    } catch (err) {
      upstreamFailed(reply, { error: err as Error });
    }
  };
  return handler;
}

/**
 * Forwards `prefix` and everything under it with the path unchanged. With a per-request upstream
 * the library is given `upstream: ''` and `replyOptions.getUpstream`, which it consults for plain
 * HTTP and, with `websocket: true`, for each upgrade too (WebSocketProxy.findUpstream).
 */
export async function registerProxy(app: FastifyInstance, route: ProxyRoute): Promise<void> {
  const pick = typeof route.upstream === 'function' ? route.upstream : undefined;
  const chosen = new WeakMap<object, string>();
  const { dispatcher, idempotency } = route;
  const headersOf: typeof upstreamHeaders = (req, headers) => {
    let out = upstreamHeaders(req, headers);
    if (dispatcher) out = dispatcher.tag(req, out);
    if (idempotency) out = idempotency.tag(req, out);
    return out;
  };
  const base: Upstream = dispatcher ?? route.pool ?? boundedAgent(route.connections);
  const upstream = idempotency ? idempotency.wrap(base) : base;
  const replyOptions: ReplyOptions = {
    rewriteRequestHeaders: headersOf,
    onError:
      pick && route.failover
        ? withFailover(route, (req) => chosen.get(req) ?? pick(req), headersOf)
        : upstreamFailed,
    // No automatic retries: a POST must not run twice, and a long-poll GET must not hop gateways.
    retryDelay: () => null,
  };
  if (pick) {
    replyOptions.getUpstream = (req) => {
      const url = pick(req as FastifyRequest);
      chosen.set(req, url);
      return url;
    };
  }
  const common = {
    prefix: route.prefix,
    rewritePrefix: route.prefix,
    upstream: pick ? '' : (route.upstream as string),
    replyOptions,
    // Close the upstream keep-alive connections with the edge, so upstreams can shut down promptly.
    destroyAgent: true,
    // Our own pass-through parsers below, which hold a body without Content-Length to the limit.
    proxyPayloads: false,
    undici: upstream,
  };
  const { bodyLimit } = route;
  // The proxy streams bodies through untouched: drop the factory's parsers (JSON and text would be
  // parsed and re-serialized, anything else refused) in a child context.
  await app.register(async (child) => {
    child.removeAllContentTypeParsers();
    const passThrough = (req: FastifyRequest, payload: Readable, done: (err: null, body: Readable) => void) =>
      done(null, bodyLimit ? limitedBody(req, payload, bodyLimit(req)) : payload);
    child.addContentTypeParser('application/json', passThrough);
    child.addContentTypeParser('*', passThrough);
    if (bodyLimit) child.addHook('onRequest', refuseDeclaredOverLimit(bodyLimit));
    if (dispatcher) child.addHook('onRequest', dispatcher.track);
    if (idempotency) child.addHook('preHandler', idempotency.preHandler);
    if (route.websocket) {
      await child.register(httpProxy, {
        ...common,
        websocket: true,
        ...(route.maxFrameBytes ? { wsServerOptions: { maxPayload: route.maxFrameBytes } } : {}),
        wsClientOptions: {
          // Runtime option of the library (README, wsClientOptions), absent from its typings.
          ...({
            rewriteRequestHeaders: (headers: IncomingHttpHeaders, req: AnyRequest) => forwarded(req, headers),
          } as object),
        },
      });
    } else {
      await child.register(httpProxy, common);
    }
  });
}
