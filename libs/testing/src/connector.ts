import { io, type Socket } from 'socket.io-client';
import type { OanEventEnvelope } from '@oan/protocol';

export interface ConnectorOptions {
  baseUrl: string;
  token: string;
  /** A stored cursor; when absent the client starts at GET /events/cursor. */
  cursor?: string;
  transports?: ('websocket' | 'polling')[];
  client?: { name: string; version: string };
}

/**
 * A connector as the public SDK behaves: cursor, socket, backfill on every connect with
 * live events buffered meanwhile, one serialized dispatch that drops `seq <= cursor`. `delivered`
 * is what the host would see; `pushes` is every raw socket push, to check order and duplicates.
 *
 * A backfill that meets an error (a 503 while a dependency is down, a refused connection while the
 * edge restarts) retries until it gets through: flushing the live buffer after a failed backfill
 * would move the cursor over the gap and lose the events in it. A newer connect supersedes an older
 * backfill still running.
 */
export class TestConnector {
  readonly delivered: OanEventEnvelope[] = [];
  readonly pushes: OanEventEnvelope[] = [];
  readonly disconnects: string[] = [];
  /** Every failed backfill attempt (status and text, or the connection error), in order. */
  readonly backfillFailures: string[] = [];
  socket: Socket | undefined;
  cursor = 0n;
  private buffering = false;
  private buffer: OanEventEnvelope[] = [];
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private generation = 0;

  protected readonly opts: ConnectorOptions;
  constructor(opts: ConnectorOptions) {
    this.opts = opts;
  }

  async rest<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T; text: string }> {
    const res = await fetch(`${this.opts.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.opts.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** Resolves after the first connection's backfill, like the SDK's connect(). */
  async connect(): Promise<void> {
    if (this.opts.cursor !== undefined) this.cursor = BigInt(this.opts.cursor);
    else {
      const r = await this.rest<{ seq: string }>('GET', '/events/cursor');
      if (r.status !== 200) throw new Error(`cursor: ${r.status} ${r.text}`);
      this.cursor = BigInt(r.body.seq);
    }
    const socket = io(`${this.opts.baseUrl}/oan`, {
      transports: this.opts.transports ?? ['websocket'],
      auth: { token: this.opts.token, ...(this.opts.client ? { client: this.opts.client } : {}) },
      reconnectionDelay: 200,
      reconnectionDelayMax: 1000,
      forceNew: true,
    });
    this.socket = socket;
    socket.on('oan:event', (e: OanEventEnvelope) => {
      this.pushes.push(e);
      if (this.buffering) this.buffer.push(e);
      else this.enqueue([e]);
    });
    socket.on('disconnect', (reason) => {
      this.disconnects.push(reason);
      // after a server disconnect(true) the SDK forces one manual reconnect.
      if (reason === 'io server disconnect' && !this.stopped) setTimeout(() => socket.connect(), 200);
    });
    const first = new Promise<void>((resolve, reject) => {
      socket.once('connect_error', (err) => reject(err));
      socket.once('connect', () => resolve());
    });
    let backfilled: Promise<void> = Promise.resolve();
    socket.on('connect', () => {
      backfilled = this.backfill();
    });
    await first;
    await backfilled;
    await this.idle();
  }

  private async backfill(): Promise<void> {
    const gen = ++this.generation;
    const current = () => !this.stopped && gen === this.generation;
    this.buffering = true;
    try {
      for (let failures = 0; current();) {
        const page = await this.rest<OanEventEnvelope[]>(
          'GET',
          `/events?since=${this.cursor}&limit=200`,
        ).catch((err: Error) => ({ status: 0, text: err.message, body: [] as OanEventEnvelope[] }));
        if (page.status !== 200) {
          this.backfillFailures.push(`${page.status} ${page.text.slice(0, 120)}`);
          if (++failures > 150) throw new Error(`backfill kept failing: ${page.status} ${page.text}`);
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        this.enqueue(page.body);
        await this.queue;
        if (page.body.length < 200) break;
      }
    } finally {
      if (gen === this.generation) {
        this.buffering = false;
        const live = this.buffer.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
        this.buffer = [];
        this.enqueue(live);
      }
    }
  }

  private enqueue(events: OanEventEnvelope[]): void {
    this.queue = this.queue.then(() => {
      for (const e of events) {
        if (BigInt(e.seq) <= this.cursor) continue;
        this.delivered.push(e);
        this.cursor = BigInt(e.seq);
      }
    });
  }

  idle(): Promise<void> {
    return this.queue;
  }

  close(): void {
    this.stopped = true;
    this.socket?.disconnect();
  }
}

/** Opens a bare socket (no SDK logic) and resolves on connect or rejects with the connect_error. */
export function openSocket(
  baseUrl: string,
  token: string | undefined,
  opts: { transports?: ('websocket' | 'polling')[]; client?: unknown } = {},
): Promise<Socket> {
  const socket = io(`${baseUrl}/oan`, {
    transports: opts.transports ?? ['websocket'],
    auth: token === undefined ? {} : { token, ...(opts.client ? { client: opts.client } : {}) },
    reconnection: false,
    forceNew: true,
  });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (err) => {
      socket.close();
      reject(err);
    });
  });
}
