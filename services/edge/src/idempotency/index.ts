import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { ErrorCodes, IDEMPOTENCY_KEY_HEADER } from '@oan/protocol';
import type { AccountResolver } from '../accounts.ts';
import { TOO_LARGE, isBodyTooLarge } from '../bodyLimit.ts';
import { requestFingerprint } from './fingerprint.ts';
import { parseIdempotencyKey } from './key.ts';
import type { IdempotencyStore, StoredResponse } from './store.ts';

export { IdempotencyStore } from './store.ts';

/** Names a request's pending record between the route and the dispatcher; never sent on. */
const TAG = 'x-oan-edge-idempotency';

type Headers = Record<string, string | string[] | undefined>;
type Callback = (err: Error | null, data: Dispatcher.ResponseData) => void;
/** What reply-from takes as its `undici` option: undici's `request`, and `destroy` for close. */
export interface Upstream {
  request: Dispatcher['request'];
  destroy(): Promise<void>;
}

interface Pending {
  record: string;
  lock: string;
  /** Handed to the upstream: from then on only its answer settles the record. */
  dispatched: boolean;
}

const REUSED = {
  error: 'Idempotency-Key was already used with another request',
  code: ErrorCodes.idempotencyKeyReused,
};
const IN_USE = {
  error: 'A request with this Idempotency-Key is still being processed; retry later',
  code: ErrorCodes.idempotencyKeyInUse,
};

async function readAll(body: unknown): Promise<Buffer> {
  if (!(body instanceof Readable)) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `Idempotency-Key` on every POST of /api/v1 (a connector extension; the IETF httpapi draft; ADR 0017).
 * A first request takes a lock on (account, key) and goes on with its body, read here once; its final
 * answer is kept for the retention time when it is not a 5xx (a 5xx may be retried). The same key and
 * request again answers that again, without reaching the owner; another request under the key is a
 * 422; the same one while the first is in flight a 409. The answer is recorded by the upstream
 * dispatcher itself, before the client sees it and even when the client has gone away meanwhile.
 */
export class Idempotency {
  private readonly pending = new Map<string, Pending>();
  private readonly tags = new WeakMap<object, string>();
  private readonly timer: NodeJS.Timeout;

  private readonly store: IdempotencyStore;
  private readonly accounts: AccountResolver;
  private readonly log: FastifyBaseLogger;
  constructor(store: IdempotencyStore, accounts: AccountResolver, log: FastifyBaseLogger, lockMs: number) {
    this.store = store;
    this.accounts = accounts;
    this.log = log;
    // The lock lives while its request does: renewed here, it expires soon after an edge that died.
    this.timer = setInterval(() => this.renew(), Math.max(100, Math.floor(lockMs / 3)));
    this.timer.unref();
  }

  readonly preHandler = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const header = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (req.method !== 'POST' || header === undefined) return;
    // No account (no or an invalid credential), no idempotency — the owner answers (a 401, or a sign-in route) as in v1.
    const accountId = await this.accounts.accountOf(req);
    if (accountId === null) return;
    const parsed = parseIdempotencyKey(Array.isArray(header) ? header.join(', ') : header);
    if ('error' in parsed)
      return reply.status(400).send({ error: parsed.error, code: ErrorCodes.validation });

    let body: Buffer;
    try {
      body = await readAll(req.body);
    } catch (err) {
      if (isBodyTooLarge(err)) return reply.status(413).send(TOO_LARGE);
      throw err;
    }
    const fingerprint = requestFingerprint(req.method, req.url, req.headers['content-type'] ?? '', body);
    const record = this.store.recordOf(accountId, parsed.key);
    const begun = await this.store.begin(record, fingerprint);
    if (begun.kind !== 'started' && begun.fingerprint !== fingerprint) return reply.status(422).send(REUSED);
    if (begun.kind === 'inFlight') return reply.status(409).send(IN_USE);
    if (begun.kind === 'done') return this.replay(reply, begun.response);

    const tag = randomUUID();
    const pending: Pending = { record, lock: begun.lock, dispatched: false };
    this.pending.set(tag, pending);
    this.tags.set(req, tag);
    // Never sent upstream (an edge error, a refused body): the key is free again at once.
    reply.raw.once('close', () => {
      if (!pending.dispatched && this.pending.delete(tag)) void this.settle(pending, null);
    });
    if (req.body !== undefined) req.body = Readable.from([body]);
    return undefined;
  };

  /** The upstream headers of `req`, tagged with its pending record. */
  tag<H extends Headers>(req: object, headers: H): H {
    const tag = this.tags.get(req);
    return tag ? { ...headers, [TAG]: tag } : headers;
  }

  /** `inner` with the answers of tagged requests recorded before they are handed on. */
  wrap(inner: Upstream): Upstream {
    const request = (opts: Dispatcher.RequestOptions, callback: Callback) => {
      const headers = { ...(opts.headers as Headers) };
      const tag = headers[TAG];
      delete headers[TAG];
      const pending = typeof tag === 'string' ? this.pending.get(tag) : undefined;
      if (!pending) return inner.request({ ...opts, headers }, callback);
      pending.dispatched = true;
      return inner.request({ ...opts, headers }, (err, data) => {
        void this.answered(tag as string, pending, err, data).then(
          (buffered) => callback(err, buffered ?? data),
          (failure: unknown) => callback(failure as Error, data),
        );
      });
    };
    return { request: request as Dispatcher['request'], destroy: () => inner.destroy() };
  }

  private async answered(
    tag: string,
    pending: Pending,
    err: Error | null,
    data: Dispatcher.ResponseData | undefined,
  ): Promise<Dispatcher.ResponseData | undefined> {
    this.pending.delete(tag);
    if (err || !data) {
      await this.settle(pending, null);
      return undefined;
    }
    let body: Buffer;
    try {
      body = await readAll(data.body);
    } catch (failure) {
      await this.settle(pending, null);
      throw failure;
    }
    const type = data.headers['content-type'];
    const final = data.statusCode < 500;
    await this.settle(
      pending,
      final
        ? {
            status: data.statusCode,
            contentType: typeof type === 'string' ? type : null,
            body: body.toString('base64'),
          }
        : null,
    );
    return { ...data, body: Readable.from([body]) as unknown as Dispatcher.ResponseData['body'] };
  }

  /** Records the answer (or frees the key); a failure here is logged, the answer still goes out. */
  private async settle(pending: Pending, response: StoredResponse | null): Promise<void> {
    try {
      if (response) {
        if (!(await this.store.complete(pending.record, pending.lock, response))) {
          this.log.warn('idempotency lock lost before the answer was recorded');
        }
      } else {
        await this.store.release(pending.record, pending.lock);
      }
    } catch (err) {
      this.log.error({ err }, 'idempotency record could not be settled');
    }
  }

  private replay(reply: FastifyReply, r: StoredResponse): FastifyReply {
    reply.status(r.status).header('idempotent-replayed', 'true');
    if (r.contentType) reply.header('content-type', r.contentType);
    return reply.send(Buffer.from(r.body, 'base64'));
  }

  private renew(): void {
    for (const p of this.pending.values()) {
      this.store
        .extend(p.record, p.lock)
        .catch((err: unknown) => this.log.warn({ err }, 'lock renewal failed'));
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
