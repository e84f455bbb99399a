import { isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { Replicas } from '@oan/http';
import { httpProbe, systemResolver, type GatewayProbe, type Resolver } from './gateways.ts';
import type { Upstream } from './idempotency/index.ts';

export interface ServiceDiscovery {
  /** How often host names are resolved again (default 2 s): new replicas join, vanished ones leave. */
  resolveMs?: number;
  resolve?: Resolver;
  probe?: GatewayProbe;
  /** Connections to each replica (EDGE_UPSTREAM_CONNECTIONS). */
  connections?: number;
  /** How long a replica that refused a connection is left out before it is tried again. */
  setAsideMs?: number;
}

/**
 * One service behind the edge, as many replicas as it runs. Its URLs are the configured ones
 * (`AUTH_URL=http://127.0.0.1:8181,http://127.0.0.1:8281`), and a host name in one stands for every
 * address it resolves to (`http://auth:8181` under docker-compose `--scale auth=N`), looked up again
 * every 2 s. A replica joins the rotation once its /health answers and leaves it when it stops
 * answering or its name no longer resolves to it; with none answering, the configured URLs stand in.
 * Requests are spread and retried by `Replicas` (libs/http): undici's BalancedPool, and a second
 * attempt only for a connection that was never made, so no write ever runs twice.
 */
export class ServiceReplicas {
  readonly replicas: Replicas;
  private readonly configured: readonly string[];
  private readonly d: Required<Omit<ServiceDiscovery, 'connections' | 'setAsideMs'>>;
  /** The addresses the names resolved to last, as URLs (an address literal is its own). */
  private candidates: string[];
  private lastResolve = 0;
  private cursor = 0;

  constructor(urls: readonly string[], discovery: ServiceDiscovery = {}) {
    this.configured = [...urls];
    this.candidates = [...urls];
    this.d = { resolveMs: 2000, resolve: systemResolver, probe: httpProbe, ...discovery };
    this.replicas = new Replicas(urls, {
      ...(discovery.connections ? { connections: discovery.connections } : {}),
      ...(discovery.setAsideMs ? { setAsideMs: discovery.setAsideMs } : {}),
    });
  }

  /** The origin reply-from names in each request (its Host); the pool chooses where it goes. */
  get base(): string {
    return this.configured[0]!;
  }

  /** The replicas in the rotation now. */
  members(): readonly string[] {
    return this.replicas.upstreams();
  }

  /** Round robin over the rotation, for what undici does not carry (WebSocket upgrades). */
  next(): string {
    const members = this.members();
    return members[this.cursor++ % members.length] ?? this.base;
  }

  /**
   * A dispatcher for one route. reply-from destroys its dispatcher when its route closes; the
   * routes of one service share the replicas, which `close` ends once.
   */
  dispatcher(): Upstream {
    const d: Dispatcher = this.replicas.dispatcher;
    const request: Dispatcher['request'] = d.request.bind(d);
    return { request, destroy: async () => undefined };
  }

  /** Resolves the names when due, probes every candidate, and makes the healthy ones the rotation. */
  async refresh(timeoutMs = 1000): Promise<void> {
    if (this.lastResolve === 0 || Date.now() - this.lastResolve >= this.d.resolveMs) {
      const resolved = await Promise.all(this.configured.map((u) => this.addressesOf(u)));
      // A failed lookup (a DNS hiccup, every replica gone at once) keeps what was known.
      if (resolved.every((r) => r !== undefined)) {
        this.lastResolve = Date.now();
        this.candidates = [...new Set(resolved.flat())];
      }
    }
    const healthy = await Promise.all(
      this.candidates.map(async (url) => ((await this.d.probe(url, timeoutMs)) ? url : undefined)),
    );
    const up = healthy.filter((u): u is string => u !== undefined);
    this.replicas.update(up.length > 0 ? up : this.configured);
  }

  private async addressesOf(url: string): Promise<string[] | undefined> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) return [u.origin];
    const addresses = await this.d.resolve(host).catch(() => undefined);
    return addresses?.map((a) => `${u.protocol}//${a}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`);
  }

  /** Probes (and resolves) every `intervalMs`, first at once. Returns a stop function. */
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
    void tick();
    const timer = setInterval(() => void tick(), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  close(): Promise<void> {
    return this.replicas.close();
  }
}
