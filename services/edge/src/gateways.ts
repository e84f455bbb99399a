import { lookup } from 'node:dns/promises';

/** What a gateway's /health says of it: undefined when it does not answer 200. */
export type GatewayProbe = (url: string, timeoutMs: number) => Promise<{ gatewayId?: unknown } | undefined>;

/** Every address of a host name (each replica of a compose service is one). */
export type Resolver = (host: string) => Promise<string[]>;

/** `GATEWAY_DNS`: the gateways are every address of `host`, each serving on `port` (ADR 0021). */
export interface GatewayDiscovery {
  host: string;
  port: number;
  /** How often the name is resolved again (default 2 s): new replicas join, vanished ones leave. */
  resolveMs?: number;
  resolve?: Resolver;
  probe?: GatewayProbe;
}

/** A replica's id in its /health: what it prefixes its sids with (services/gateway config, `auto`). */
const REPLICA_ID = /^[A-Za-z0-9_-]{1,63}$/;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true })).map((a) => (a.family === 6 ? `[${a.address}]` : a.address));

export const httpProbe: GatewayProbe = (url, timeoutMs) =>
  fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) })
    .then(async (r) => (r.ok ? ((await r.json().catch(() => ({}))) as { gatewayId?: unknown }) : undefined))
    .catch(() => undefined);

/**
 * The gateway pool. Socket.IO long-polling is stateful: every request of a session must reach the
 * gateway that holds it. Each gateway mints session ids `<GATEWAY_ID>.<random>`, so the edge reads
 * the owner from the `sid` query parameter; a request without a sid (a new session, or a websocket-
 * only client) may go anywhere and is spread round robin.
 *
 * Two ways to know the gateways: a fixed list (`GATEWAY_URLS`, ids `GATEWAY_IDS` or `g<i+1>`), or
 * discovery (`GATEWAY_DNS`, {@link GatewayPool.discover}): every address the name resolves to is a
 * replica, which joins the rotation once its /health answers, under the id that /health names, and
 * leaves it when the name no longer resolves to it (`docker-compose up --scale gateway=N`).
 */
export class GatewayPool {
  private urls: string[];
  private byId: Map<string, string>;
  private cursor = 0;
  private readonly downUntil = new Map<string, number>();
  private readonly discovery: Required<GatewayDiscovery> | undefined;
  /** Discovery: the addresses the name resolved to last; those not yet healthy wait outside `urls`. */
  private resolved: string[] = [];
  private lastResolve = 0;

  constructor(
    urls: readonly string[],
    ids: readonly string[] = urls.map((_, i) => `g${i + 1}`),
    discovery?: GatewayDiscovery,
  ) {
    if (urls.length === 0 && !discovery) throw new Error('at least one gateway is needed');
    this.urls = [...urls];
    this.byId = new Map(ids.map((id, i) => [id, urls[i] as string]));
    this.discovery = discovery && {
      resolveMs: 2000,
      resolve: systemResolver,
      probe: httpProbe,
      ...discovery,
    };
  }

  /** A pool of the replicas behind one DNS name; empty until {@link refresh} (startProbing runs it). */
  static discover(discovery: GatewayDiscovery): GatewayPool {
    return new GatewayPool([], [], discovery);
  }

  /** The gateways in the rotation (discovery: the healthy replicas, by address). */
  members(): readonly string[] {
    return this.urls;
  }

  /** The gateway whose sids start `<id>.` (discovery: learnt from its /health). */
  urlOf(id: string): string | undefined {
    return this.byId.get(id);
  }

  /**
   * Round robin over the gateways not marked down (all of them when every one is). With discovery
   * and no replica known yet: the name itself, which the network's DNS spreads.
   */
  next(): string {
    if (this.urls.length === 0) return `http://${this.discovery!.host}:${this.discovery!.port}`;
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
   * One round of probes (and, with discovery, of resolving the name when `resolveMs` has passed).
   * A replica whose probe fails is marked down; with discovery a healthy one joins under the id its
   * /health names, and one the name no longer resolves to leaves with its id.
   */
  async refresh(intervalMs = 1000): Promise<void> {
    const d = this.discovery;
    if (!d) {
      await Promise.all(
        this.urls.map(async (url) => {
          if (await httpProbe(url, intervalMs)) this.downUntil.delete(url);
          else this.markDown(url, intervalMs * 2);
        }),
      );
      return;
    }
    if (Date.now() - this.lastResolve >= d.resolveMs || this.lastResolve === 0) {
      const addresses = await d.resolve(d.host).catch(() => undefined);
      // A failed lookup (DNS hiccup, or every replica gone at once) keeps what was known: the probes
      // below mark the dead ones down.
      if (addresses) {
        this.lastResolve = Date.now();
        this.resolved = [...new Set(addresses)].map((a) => `http://${a}:${d.port}`);
        const gone = this.urls.filter((u) => !this.resolved.includes(u));
        if (gone.length > 0) this.drop(gone);
      }
    }
    await Promise.all(
      this.resolved.map(async (url) => {
        const health = await d.probe(url, intervalMs);
        const id =
          typeof health?.gatewayId === 'string' && REPLICA_ID.test(health.gatewayId)
            ? health.gatewayId
            : undefined;
        if (!health || !id) {
          this.markDown(url, intervalMs * 2);
          return;
        }
        this.downUntil.delete(url);
        // A new replica, or an address now held by another one (a container replaced in place).
        if (this.byId.get(id) !== url) {
          for (const [known, u] of this.byId) if (u === url) this.byId.delete(known);
          this.byId.set(id, url);
        }
        if (!this.urls.includes(url)) this.urls.push(url);
      }),
    );
  }

  private drop(urls: readonly string[]): void {
    this.urls = this.urls.filter((u) => !urls.includes(u));
    this.byId = new Map([...this.byId].filter(([, u]) => !urls.includes(u)));
    for (const u of urls) this.downUntil.delete(u);
  }

  /**
   * Probes every gateway's /health each `intervalMs` (with discovery, first at once), so new sockets
   * and requests avoid one that died before any request found out. Returns a stop function.
   */
  startProbing(intervalMs = 1000): () => void {
    let running = false;
    const tick = async () => {
      if (running) return;
      running = true;
      try {
        await this.refresh(intervalMs);
      } finally {
        running = false;
      }
    };
    if (this.discovery) void tick();
    const timer = setInterval(() => void tick(), intervalMs);
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
