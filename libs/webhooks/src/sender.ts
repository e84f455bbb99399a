import { lookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { refuseAddress, type UrlPolicy } from './addresses.ts';

/** One POST of one signed body to one endpoint. */
export interface Attempt {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** A 2xx came in time. */
  delivered: boolean;
  /** The response body as text, when asked for (`answerLimitBytes`) and it came complete within the limit. */
  answer?: string;
}

export interface SendOptions {
  /** Keep the response body up to this many bytes (a longer one is an error); otherwise it is discarded. */
  answerLimitBytes?: number;
  /** A shorter timeout than the sender's for this request. */
  timeoutMs?: number;
  /** `application/json` unless given (A2A push notifications are `application/a2a+json`). */
  contentType?: string;
  /** More request headers (an A2A notification token, an Authorization); they never replace the signature's. */
  headers?: Record<string, string>;
}

/**
 * Where a body goes and the Standard Webhooks key it is signed with: a `whsec_` secret, or raw key
 * bytes; null sends it unsigned (the `webhook-id` and `webhook-timestamp` headers still go, so a
 * receiver can drop a retried duplicate).
 */
export interface Endpoint {
  url: string;
  secret: string | Uint8Array | null;
}

export interface SenderOptions {
  policy: UrlPolicy;
  /** A 2xx must come within this (10 s by default). */
  timeoutMs: number;
  /** `OAN-Webhooks/1` unless given. */
  userAgent?: string;
}

class RefusedAddress extends Error {
  readonly code = 'EWEBHOOKADDRESS';
}

/**
 * Resolves like the system resolver, then refuses the connection when any address is not allowed:
 * the check is on what the socket will connect to, at send time (a DNS answer can change after
 * registration), and the checked address is the one used (no second lookup to rebind).
 */
function guardedLookup(policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.map((a) => refuseAddress(a.address, policy)).find((r) => r !== null);
      const first = addresses[0];
      if (refused || !first) return callback(new RefusedAddress(refused ?? `${hostname}: no address`), '', 0);
      if (options.all) (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Signs (Standard Webhooks 1.0, with its library) and POSTs bodies to the URLs the account gave us:
 * webhook endpoints and runtime endpoints. Redirects are not followed (a 3xx is a failure like any
 * other non-2xx); the response body is discarded unless the caller reads the answer.
 */
export class WebhookSender {
  private readonly agent: Agent;

  private readonly opts: SenderOptions;
  constructor(opts: SenderOptions) {
    this.opts = opts;
    this.agent = new Agent({
      connect: { lookup: guardedLookup(opts.policy), timeout: opts.timeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async send(
    endpoint: Endpoint,
    id: string,
    body: string,
    now: Date,
    opts: SendOptions = {},
  ): Promise<Attempt> {
    const timeoutMs = Math.min(opts.timeoutMs ?? this.opts.timeoutMs, this.opts.timeoutMs);
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    const host = new URL(endpoint.url).hostname.replace(/^\[|\]$/g, '');
    // A literal address is connected to without a lookup: checked here instead.
    const refused = isIP(host) !== 0 ? refuseAddress(host, this.opts.policy) : null;
    if (refused) return { statusCode: null, error: refused, latencyMs: 0, delivered: false };
    try {
      const res = await request(endpoint.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          ...opts.headers,
          'content-type': opts.contentType ?? 'application/json',
          'user-agent': this.opts.userAgent ?? 'OAN-Webhooks/1',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          ...(endpoint.secret === null
            ? {}
            : { 'webhook-signature': signer(endpoint.secret).sign(id, now, body) }),
        },
        body,
      });
      const delivered = res.statusCode >= 200 && res.statusCode < 300;
      if (!delivered || opts.answerLimitBytes === undefined) {
        void res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        return { statusCode: res.statusCode, error: null, latencyMs: latency(), delivered };
      }
      const answer = await readLimited(res.body, opts.answerLimitBytes);
      const error = answer === null ? `answer longer than ${opts.answerLimitBytes} bytes` : null;
      return {
        statusCode: res.statusCode,
        error,
        latencyMs: latency(),
        delivered: answer !== null,
        ...(answer === null ? {} : { answer }),
      };
    } catch (err) {
      return {
        statusCode: null,
        error: describe(err, timeoutMs),
        latencyMs: latency(),
        delivered: false,
      };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

const signer = (secret: string | Uint8Array) =>
  typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });

/** The body as text, or null past `limit` bytes (the rest is not read). */
async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (e.cause instanceof RefusedAddress) return e.cause.message;
  if (err instanceof RefusedAddress) return err.message;
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `no answer within ${timeoutMs} ms`;
  }
  return (e.code ?? e.message ?? String(err)).slice(0, 500);
}
