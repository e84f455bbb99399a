import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver does with one request: answer with a status (after a delay), or never answer. */
export type Behaviour = { status: number; delayMs?: number } | 'hang';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** The status it was answered with, once answered (undefined while held, or never). */
  answered?: number;
}

/**
 * A real webhook receiver on loopback (for the webhook tests): records every request, and answers each
 * path by its script (one behaviour per request, the last one repeated), 200 by default.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Behaviour[]>();
  private readonly held = new Set<ServerResponse>();

  private readonly server: Server;
  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        receiver.handle(req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  script(path: string, behaviours: Behaviour[]): void {
    this.scripts.set(path, [...behaviours]);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  private handle(path: string, headers: IncomingHttpHeaders, body: string, res: ServerResponse): void {
    const entry: Received = { path, headers, body, at: Date.now() };
    this.received.push(entry);
    const script = this.scripts.get(path) ?? [];
    const behaviour: Behaviour = (script.length > 1 ? script.shift() : script[0]) ?? { status: 200 };
    if (behaviour === 'hang') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    const answer = () => {
      entry.answered = behaviour.status;
      res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end('ok');
    };
    if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs);
    else answer();
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}
