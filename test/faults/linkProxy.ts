import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { freePort } from '@oan/testing';

/** What a link does to the bytes it carries: pass them, hold each chunk `ms` first, or carry none. */
export type LinkMode = { kind: 'pass' } | { kind: 'delay'; ms: number } | { kind: 'cut' };

/**
 * A loopback TCP proxy between one process and one dependency (Postgres, Redis, a Kafka broker):
 * it passes the bytes, delays every chunk in both directions (in order), or cuts the link: open
 * connections are destroyed and new ones are accepted and dropped at once, as a dead route would.
 */
export class LinkProxy {
  private mode: LinkMode = { kind: 'pass' };
  /** Connections the process opened through the link (none: it does not reach the dependency here). */
  connections = 0;
  private readonly open = new Set<Socket>();

  private readonly server: Server;
  private readonly target: { host: string; port: number };
  private constructor(server: Server, target: { host: string; port: number }) {
    this.server = server;
    this.target = target;
  }

  /** Listens on `port` of loopback (default: one the system picks). */
  static async start(target: { host: string; port: number }, port = 0): Promise<LinkProxy> {
    const server = createServer();
    const proxy = new LinkProxy(server, target);
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  set(mode: LinkMode): void {
    this.mode = mode;
    if (mode.kind === 'cut') for (const s of this.open) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private accept(client: Socket): void {
    this.connections++;
    if (this.mode.kind === 'cut') {
      client.destroy();
      return;
    }
    const upstream = connect(this.target);
    for (const s of [client, upstream]) {
      this.open.add(s);
      s.setNoDelay(true);
      // Either end going away ends the pair; errors are the fault under test, not the proxy's.
      s.on('error', () => undefined);
      s.on('close', () => {
        this.open.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /** Copies `from` to `to`, each chunk held for the current delay and never overtaking the one before. */
  private pipe(from: Socket, to: Socket): void {
    const queue: { chunk: Buffer; due: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.due <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (!to.destroyed) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(flush, queue[0]!.due - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      const ms = this.mode.kind === 'delay' ? this.mode.ms : 0;
      const due = Math.max(Date.now() + ms, queue.at(-1)?.due ?? 0);
      if (ms === 0 && queue.length === 0) {
        to.write(chunk);
        return;
      }
      queue.push({ chunk, due });
      timer ??= setTimeout(flush, due - Date.now());
    });
    from.on('close', () => {
      if (timer) clearTimeout(timer);
    });
  }
}

/**
 * A port a client dials instead of its dependency: nothing listens on it until `open`, so each
 * connection is refused, as a killed server's port refuses them; then a link proxy there carries
 * the bytes to the dependency (a process started while its server is away, then the server back).
 */
export class Door {
  private proxy: LinkProxy | undefined;
  readonly port: number;
  private readonly target: { host: string; port: number };
  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.target = target;
  }

  /**
   * A shut door in front of `target` (`host:port`), on a port outside the range the kernel hands to
   * outgoing connections (`freePort`), so no client's own socket takes it before the door opens.
   */
  static async shut(target: string): Promise<Door> {
    const colon = target.lastIndexOf(':');
    return new Door(await freePort(), {
      host: target.slice(0, colon),
      port: Number(target.slice(colon + 1)),
    });
  }

  async open(): Promise<void> {
    this.proxy = await LinkProxy.start(this.target, this.port);
  }

  async close(): Promise<void> {
    await this.proxy?.close();
  }
}
