import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Agent, type Dispatcher } from 'undici';
import { OAN_EVENTS_MAX_WAIT_SECONDS } from '@oan/protocol';

/** Names a proxied request's abort signal between the route and the dispatcher; never sent on. */
const TAG = 'x-oan-edge-release';

type Headers = Record<string, string | string[] | undefined>;

/**
 * The dispatcher of the gateways' route. A `GET /events?wait=N` is held by its gateway up to 30 s
 * (a long-poll), so two things differ from reply-from's own dispatcher:
 * - a request whose client went away is aborted upstream, so the gateway releases its hold at once
 *   instead of at the end of the wait (reply-from never aborts an upstream request by itself);
 * - more connections per gateway than reply-from's 128 (EDGE_GATEWAY_CONNECTIONS): a held request
 *   occupies one, and past the bound every other request to that gateway queues behind the holds.
 *   Bounded still, so a burst queues here instead of opening sockets without end.
 * Timeouts cover the longest hold, plus the bounded wait for the caller's own writes before it.
 */
export class ReleasingDispatcher {
  private readonly agent: Agent;
  constructor(connections: number) {
    this.agent = new Agent({
      connections,
      headersTimeout: (OAN_EVENTS_MAX_WAIT_SECONDS + 30) * 1000,
      bodyTimeout: (OAN_EVENTS_MAX_WAIT_SECONDS + 30) * 1000,
    });
  }
  private readonly aborts = new Map<string, AbortController>();
  private readonly tags = new WeakMap<object, string>();

  /** An onRequest hook: the request is aborted upstream if its client closes before the answer. */
  readonly track = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const tag = randomUUID();
    const abort = new AbortController();
    this.aborts.set(tag, abort);
    this.tags.set(req, tag);
    reply.raw.once('close', () => {
      this.aborts.delete(tag);
      if (!reply.raw.writableFinished) abort.abort();
    });
  };

  /** The upstream headers of `req`, tagged with its abort signal's name. */
  tag<H extends Headers>(req: object, headers: H): H {
    const tag = this.tags.get(req);
    return tag ? { ...headers, [TAG]: tag } : headers;
  }

  /** reply-from's `undici` option: any object with undici's `request`. */
  readonly request = ((
    opts: Dispatcher.RequestOptions,
    callback: (err: Error | null, data: Dispatcher.ResponseData) => void,
  ) => {
    const headers = { ...(opts.headers as Headers) };
    const tag = headers[TAG];
    delete headers[TAG];
    const signal = typeof tag === 'string' ? this.aborts.get(tag)?.signal : undefined;
    return this.agent.request({ ...opts, headers, ...(signal ? { signal } : {}) }, callback);
  }) as Dispatcher['request'];

  /** Called by reply-from on close (`destroyAgent`). */
  destroy(): Promise<void> {
    return this.agent.destroy();
  }
}
