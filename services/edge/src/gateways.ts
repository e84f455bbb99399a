/**
 * The gateway pool. Socket.IO long-polling is stateful: every request of a session must reach the
 * gateway that holds it. Each gateway mints session ids `<GATEWAY_ID>.<random>`, so the edge reads
 * the owner from the `sid` query parameter; a request without a sid (a new session, or a websocket-
 * only client) may go anywhere and is spread round robin.
 */
export class GatewayPool {
  private readonly byId: ReadonlyMap<string, string>;
  private cursor = 0;

  constructor(
    private readonly urls: readonly string[],
    ids: readonly string[] = urls.map((_, i) => `g${i + 1}`),
  ) {
    if (urls.length === 0) throw new Error('at least one gateway is needed');
    this.byId = new Map(ids.map((id, i) => [id, urls[i] as string]));
  }

  private readonly downUntil = new Map<string, number>();

  /** Round robin over the gateways not marked down (all of them when every one is). */
  next(): string {
    for (let i = 0; i < this.urls.length; i++) {
      const url = this.urls[this.cursor % this.urls.length] as string;
      this.cursor = (this.cursor + 1) % this.urls.length;
      if (this.isUp(url)) return url;
    }
    return this.urls[this.cursor++ % this.urls.length] as string;
  }

  /** A gateway that refused a connection is skipped for `ms` (a restart takes a few seconds). */
  markDown(url: string, ms = 3000): void {
    this.downUntil.set(url, Date.now() + ms);
  }

  isUp(url: string): boolean {
    return (this.downUntil.get(url) ?? 0) <= Date.now();
  }

  /**
   * Probes every gateway's /health each `intervalMs`, so new sockets and requests avoid one that
   * died before any request found out. Returns a stop function.
   */
  startProbing(intervalMs = 1000): () => void {
    const probe = async (url: string) => {
      const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(intervalMs) })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) this.downUntil.delete(url);
      else this.markDown(url, intervalMs * 2);
    };
    const timer = setInterval(() => void Promise.all(this.urls.map(probe)), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** After `failed` refused a request: the next gateway that is up and is not `failed`. */
  failover(failed: string): string | undefined {
    this.markDown(failed);
    const others = this.urls.filter((u) => u !== failed && this.isUp(u));
    return others.length > 0 ? this.next() : undefined;
  }

  /** The owner of `sid`, else round robin (an unknown owner then answers "Session ID unknown"). */
  forSession(sid: unknown): string {
    if (typeof sid === 'string') {
      const dot = sid.indexOf('.');
      const owner = dot > 0 ? this.byId.get(sid.slice(0, dot)) : undefined;
      if (owner) return owner;
    }
    return this.next();
  }
}
