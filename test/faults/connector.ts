import { io, type Socket } from 'socket.io-client';
import type { OanEventEnvelope } from '@oan/protocol';

/** Longest any single request may take during a fault before it counts as a hang. */
export const REQUEST_BOUND_MS = 15_000;

/** One request's outcome: a status and its body, or the connection error that stood for it. */
export interface Outcome<T = unknown> {
  status: number | 'connection-error' | 'timeout';
  body: T;
  text: string;
  ms: number;
}

/** A bounded request through the edge, as an SDK sends it; never throws. */
export async function call<T = unknown>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Outcome<T>> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, text, body: parsed as T, ms: Date.now() - t0 };
  } catch (err) {
    const e = err as Error;
    const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
    return {
      status: timeout ? 'timeout' : 'connection-error',
      text: String(e.message),
      body: undefined as T,
      ms: Date.now() - t0,
    };
  }
}

/**
 * A connector as the public SDK should behave (§10.1–10.3), like libs/testing's TestConnector but
 * with a backfill that retries until it succeeds: during a fault `GET /events` may answer 503, and
 * flushing the live buffer after a failed backfill would move the cursor over the gap.
 */
export class FaultConnector {
  readonly delivered: OanEventEnvelope[] = [];
  readonly pushes: OanEventEnvelope[] = [];
  readonly disconnects: string[] = [];
  readonly backfillFailures: string[] = [];
  socket: Socket | undefined;
  cursor = 0n;
  private buffering = false;
  private buffer: OanEventEnvelope[] = [];
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;
  private generation = 0;

  constructor(
    readonly baseUrl: string,
    readonly token: string,
  ) {}

  rest<T = unknown>(method: string, path: string, body?: unknown): Promise<Outcome<T>> {
    return call<T>(this.baseUrl, this.token, method, path, body);
  }

  async connect(cursor: bigint): Promise<void> {
    this.cursor = cursor;
    const socket = io(`${this.baseUrl}/oan`, {
      transports: ['websocket'],
      auth: { token: this.token },
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
      if (reason === 'io server disconnect' && !this.stopped) setTimeout(() => socket.connect(), 200);
    });
    const first = new Promise<void>((resolve, reject) => {
      socket.once('connect_error', (err) => reject(err));
      socket.once('connect', () => resolve());
    });
    let done: Promise<void> = Promise.resolve();
    socket.on('connect', () => {
      done = this.backfill();
    });
    await first;
    await done;
    await this.idle();
  }

  private async backfill(): Promise<void> {
    const gen = ++this.generation;
    this.buffering = true;
    try {
      for (let attempt = 0; !this.stopped && gen === this.generation;) {
        const page = await this.rest<OanEventEnvelope[]>('GET', `/events?since=${this.cursor}&limit=200`);
        if (page.status !== 200) {
          this.backfillFailures.push(`${page.status} ${page.text.slice(0, 120)}`);
          if (++attempt > 100) throw new Error(`backfill kept failing: ${page.status} ${page.text}`);
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

/** Every envelope of the account after `since`, page by page (retrying a failed page, bounded). */
export async function allEvents(c: FaultConnector, since = 0n): Promise<OanEventEnvelope[]> {
  const all: OanEventEnvelope[] = [];
  for (let cursor = since, failures = 0; ;) {
    const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${cursor}&limit=200`);
    if (page.status !== 200) {
      if (++failures > 50) throw new Error(`GET /events: ${page.status} ${page.text}`);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    all.push(...page.body);
    if (page.body.length < 200) return all;
    cursor = BigInt(page.body.at(-1)!.seq);
  }
}
