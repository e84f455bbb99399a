import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import httpProxy, { type FastifyHttpProxyOptions } from '@fastify/http-proxy';
import { ErrorCodes } from '@oan/protocol';

export interface ProxyRoute {
  prefix: string;
  /** A fixed upstream, or a choice per request (HTTP and WebSocket alike). */
  upstream: string | ((req: FastifyRequest) => string);
  websocket?: boolean;
}

type ReplyOptions = NonNullable<FastifyHttpProxyOptions['replyOptions']>;
type Headers = Parameters<NonNullable<ReplyOptions['rewriteRequestHeaders']>>[1];
type AnyRequest = Parameters<NonNullable<ReplyOptions['getUpstream']>>[0];

/** Headers the upstream needs to correlate and attribute a request. */
function forwarded<H extends Headers>(req: AnyRequest, headers: H): H {
  const prior = headers['x-forwarded-for'];
  return {
    ...headers,
    'x-request-id': req.id,
    'x-forwarded-for': prior ? `${String(prior)}, ${req.ip}` : req.ip,
  };
}

/** Any failure to reach the upstream (refused, reset, timeout) is a 503 with the §0.3 body. */
const upstreamFailed: ReplyOptions['onError'] = (reply, { error }) => {
  reply.log.warn({ err: error }, 'upstream unavailable');
  void reply.status(503).send({ error: 'Service temporarily unavailable', code: ErrorCodes.unavailable });
};

/**
 * Forwards `prefix` and everything under it with the path unchanged. With a per-request upstream
 * the library is given `upstream: ''` and `replyOptions.getUpstream`, which it consults for plain
 * HTTP and, with `websocket: true`, for each upgrade too (WebSocketProxy.findUpstream).
 */
export async function registerProxy(app: FastifyInstance, route: ProxyRoute): Promise<void> {
  const pick = typeof route.upstream === 'function' ? route.upstream : undefined;
  const replyOptions: ReplyOptions = {
    rewriteRequestHeaders: forwarded,
    onError: upstreamFailed,
    // No automatic retries: a POST must not run twice, and a long-poll GET must not hop gateways.
    retryDelay: () => null,
  };
  if (pick) replyOptions.getUpstream = (req) => pick(req as FastifyRequest);
  const common = {
    prefix: route.prefix,
    rewritePrefix: route.prefix,
    upstream: pick ? '' : (route.upstream as string),
    replyOptions,
    // Close the upstream keep-alive connections with the edge, so upstreams can shut down promptly.
    destroyAgent: true,
  };
  // The proxy streams bodies through untouched: drop the factory's parsers (JSON and text would be
  // parsed and re-serialized, anything else refused) in a child context before the library adds its
  // pass-through parsers.
  await app.register(async (child) => {
    child.removeAllContentTypeParsers();
    if (route.websocket) {
      await child.register(httpProxy, {
        ...common,
        websocket: true,
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
