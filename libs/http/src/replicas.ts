import {
  BalancedPool,
  fetch,
  Pool,
  RetryAgent,
  type Dispatcher,
  type RequestInit,
  type Response,
} from 'undici';

export interface ReplicasOptions {
  /** Connections to each replica; a burst beyond them waits in the pool's queue (default 128). */
  connections?: number;
  /**
   * How long a replica whose connection was refused stays out of the rotation, unless `add` takes it
   * back first (the edge does once its /health answers). Default 2 s: a restart takes a few.
   */
  setAsideMs?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
}

/** `http://host:port` of a URL: what undici keys its pools by. */
export const originOf = (url: string): string => new URL(url).origin;

/**
 * One service's replicas as one undici dispatcher: its `BalancedPool` spreads the requests over
 * them, and its `RetryAgent` sends a request again, to another replica, only when the connection
 * for it was never made (refused, unreachable, a connect timeout). Nothing was sent then, so a POST
 * is as safe to send again as a GET. Anything that may have reached a replica (a reset, a replica
 * killed mid-request, a timeout) is the caller's error, never a second attempt: a write must not run
 * twice. A replica that refused is set aside, so the retry and the requests after it go elsewhere.
 */
export class Replicas {
  readonly dispatcher: Dispatcher;
  private readonly pool: BalancedPool;
  private readonly members = new Set<string>();
  private readonly aside = new Map<string, NodeJS.Timeout>();
  /** Errors undici reported as a failed connect: the requests they ended were never sent. */
  private readonly connectFailures = new WeakSet<object>();
  private readonly setAsideMs: number;
  private readonly first: string;

  constructor(urls: readonly string[], opts: ReplicasOptions = {}) {
    if (urls.length === 0) throw new Error('at least one replica is needed');
    this.first = originOf(urls[0]!);
    this.setAsideMs = opts.setAsideMs ?? 2000;
    this.pool = new BalancedPool([], {
      connections: opts.connections ?? 128,
      pipelining: 1,
      ...(opts.headersTimeout ? { headersTimeout: opts.headersTimeout } : {}),
      ...(opts.bodyTimeout ? { bodyTimeout: opts.bodyTimeout } : {}),
      factory: (origin: string | URL, poolOpts: Pool.Options) => {
        const pool = new Pool(origin, poolOpts);
        pool.on('connectionError', (_origin, _targets, err) => {
          this.connectFailures.add(err);
          this.setAside(String(origin));
        });
        return pool;
      },
    });
    this.update(urls);
    this.dispatcher = new RetryAgent(this.pool, {
      statusCodes: [],
      // undici calls this before it tells the pool the connect failed: decide on the next turn.
      retry: (err, { state }, done) =>
        setImmediate(() => {
          const again = this.neverSent(err) && state.counter <= this.members.size + 1;
          done(again ? null : err);
        }),
    });
  }

  /**
   * The replicas are now `urls` (the edge: those whose /health answers). Each is in the rotation at
   * once, even one set aside after a refusal (it answers again: it restarted); one that left gets no
   * new request, and its requests in flight finish.
   * An empty list changes nothing: with no replica known, the last ones known are as good a guess.
   */
  update(urls: readonly string[]): void {
    const next = new Set(urls.map(originOf));
    if (next.size === 0) return;
    for (const origin of next) {
      clearTimeout(this.aside.get(origin));
      this.aside.delete(origin);
    }
    for (const origin of this.members) if (!next.has(origin)) this.forget(origin);
    for (const origin of next) this.members.add(origin);
    this.sync();
  }

  /**
   * `fetch` of `path` from one of the replicas (an internal call between services). The URL's
   * origin is the first replica's; the pool sends it wherever it balances it to.
   */
  fetch(path: string, init: Omit<RequestInit, 'dispatcher'> = {}): Promise<Response> {
    return fetch(new URL(path, this.first), { ...init, dispatcher: this.dispatcher });
  }

  /** The replicas requests go to now. */
  upstreams(): string[] {
    return this.pool.upstreams;
  }

  /** Whether `url` is a replica, in the rotation or set aside for now. */
  has(url: string): boolean {
    return this.members.has(originOf(url));
  }

  /**
   * A failed connect, or a replica's pool that was closing when the balancer still chose it (undici's
   * BalancedPool keeps a removed pool in its rotation until its close completes): nothing was sent.
   */
  private neverSent(err: Error): boolean {
    return this.connectFailures.has(err) || (err as { code?: unknown }).code === 'UND_ERR_CLOSED';
  }

  private setAside(origin: string): void {
    if (!this.members.has(origin) || this.aside.has(origin)) return;
    const timer = setTimeout(() => {
      this.aside.delete(origin);
      this.sync();
    }, this.setAsideMs);
    timer.unref();
    this.aside.set(origin, timer);
    this.sync();
  }

  private forget(origin: string): void {
    this.members.delete(origin);
    clearTimeout(this.aside.get(origin));
    this.aside.delete(origin);
  }

  /**
   * The pool's upstreams become the members not set aside, or every member when all are: the pool
   * never goes empty (undici's BalancedPool then holds requests until an upstream is added), and a
   * request to a replica that refuses fails as fast as it would alone. New ones are added before old
   * ones leave, for the same reason.
   */
  private sync(): void {
    const live = [...this.members].filter((o) => !this.aside.has(o));
    const target = new Set(live.length > 0 ? live : this.members);
    for (const origin of target) if (!this.pool.getUpstream(origin)) this.pool.addUpstream(origin);
    for (const origin of this.pool.upstreams) if (!target.has(origin)) this.pool.removeUpstream(origin);
  }

  async close(): Promise<void> {
    for (const timer of this.aside.values()) clearTimeout(timer);
    this.aside.clear();
    await this.dispatcher.destroy();
  }
}
