import { lookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { refuseAddress, type UrlPolicy } from './addresses.ts';

/** One POST of one envelope to one endpoint. */
export interface Attempt {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  delivered: boolean;
}

export interface SenderOptions {
  policy: UrlPolicy;
  /** A 2xx must come within this (10 s by default). */
  timeoutMs: number;
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
 * Signs (Standard Webhooks 1.0, with its library) and POSTs envelopes. Redirects are not followed
 * (a 3xx is a failure like any other non-2xx), the response body is discarded.
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
    endpoint: { url: string; secret: string },
    id: string,
    body: string,
    now: Date,
  ): Promise<Attempt> {
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
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'OAN-Webhooks/1',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(endpoint.secret).sign(id, now, body),
        },
        body,
      });
      const latencyMs = latency();
      void res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const delivered = res.statusCode >= 200 && res.statusCode < 300;
      return { statusCode: res.statusCode, error: null, latencyMs, delivered };
    } catch (err) {
      return {
        statusCode: null,
        error: describe(err, this.opts.timeoutMs),
        latencyMs: latency(),
        delivered: false,
      };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
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
