import { useEffect, useState } from 'preact/hooks';
import { io, type Socket } from 'socket.io-client';
import { api, type Envelope, type Unresolved } from './api/client';
import { saveSession } from './session';

export type LiveStatus = 'connecting' | 'live' | 'offline';

/** A refusal the engine treats as terminal; the page signs out instead of retrying. */
const AUTH_DEAD = /unauthori[sz]ed|forbidden|banned/i;

/**
 * The account's events as a connector sees them: the `/oan` socket with the JWT in the
 * handshake, and `GET /events` backfill from the cursor on every (re)connect, deduplicated by eventId.
 * Every page derives what it shows from these envelopes or refetches when one concerns it, so the
 * page and a connector never disagree.
 */
class Live {
  private readonly byId = new Map<string, Envelope>();
  private sorted: Envelope[] = [];
  private cursor = 0n;
  private socket: Socket | null = null;
  private readonly listeners = new Set<() => void>();
  private backfilling: Promise<void> | null = null;
  /** A backfill was asked for while one ran: it may have read before what the asker knows of. */
  private backfillAgain = false;
  status: LiveStatus = 'connecting';
  unresolved: Unresolved = { events: [], summary: { pendingQuestions: 0, goferCount: 0, decisions: 0 } };
  version = 0;

  get events(): readonly Envelope[] {
    return this.sorted;
  }

  start(token: string): void {
    this.stop();
    const socket = io('/oan', { transports: ['websocket'], auth: { token } });
    this.socket = socket;
    socket.on('connect', () => {
      this.setStatus('live');
      void this.backfill();
    });
    socket.on('oan:event', (e: Envelope) => this.add([e]));
    socket.on('disconnect', (reason) => {
      this.setStatus('offline');
      // A server-side disconnect(true) is not retried by socket.io itself.
      if (reason === 'io server disconnect') socket.connect();
    });
    socket.on('connect_error', (err) => {
      this.setStatus('offline');
      if (AUTH_DEAD.test(err.message)) saveSession(null);
    });
    void this.backfill();
  }

  stop(): void {
    this.socket?.disconnect();
    this.socket = null;
    this.byId.clear();
    this.sorted = [];
    this.cursor = 0n;
    this.status = 'connecting';
    this.notify();
  }

  subscribe(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Reads what changed now (after one's own action) instead of waiting for the push. */
  refresh(): Promise<void> {
    return this.backfill();
  }

  /**
   * Reads from the cursor to the end. Asked again while it runs (a socket that connected, an event
   * pushed meanwhile), it reads once more when done: the running read may have passed the end before
   * an envelope the socket never got (it joined late) was stored.
   */
  private backfill(): Promise<void> {
    if (this.backfilling) {
      this.backfillAgain = true;
      return this.backfilling;
    }
    this.backfilling = (async () => {
      try {
        do {
          this.backfillAgain = false;
          for (;;) {
            const page = await getJson<Envelope[]>(`/api/v1/events?since=${this.cursor}&limit=200`);
            this.add(page, false);
            if (page.length < 200) break;
          }
          this.unresolved = await getJson<Unresolved>('/api/v1/events/unresolved');
        } while (this.backfillAgain);
      } catch {
        // Offline or signed out: the next (re)connect backfills again.
      } finally {
        this.backfilling = null;
        this.notify();
      }
    })();
    return this.backfilling;
  }

  private add(envelopes: Envelope[], live = true): void {
    let added = false;
    for (const e of envelopes) {
      if (this.byId.has(e.eventId)) continue;
      this.byId.set(e.eventId, e);
      const seq = BigInt(e.seq);
      if (seq > this.cursor) this.cursor = seq;
      added = true;
    }
    if (!added) return;
    this.sorted = [...this.byId.values()].sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
    // The unresolved digest changes with decisions and answers; read it again after a push.
    if (live) void this.backfill();
    this.notify();
  }

  private setStatus(s: LiveStatus): void {
    this.status = s;
    this.notify();
  }

  private notify(): void {
    this.version++;
    for (const l of this.listeners) l();
  }
}

/** The gateway's routes (no response schema in the OpenAPI document; the types are api/events.ts). */
async function getJson<T>(path: string): Promise<T> {
  const res = await api.GET(path as '/api/v1/events', { parseAs: 'text' });
  if (!res.response.ok) throw new Error(`GET ${path}: HTTP ${res.response.status}`);
  return JSON.parse(String(res.data)) as T;
}

export const live = new Live();

/** Re-renders on every change of the live store; returns it. */
export function useLive(): Live {
  const [, setVersion] = useState(0);
  useEffect(() => live.subscribe(() => setVersion(live.version)), []);
  return live;
}

/** A number that changes whenever an event matching `pick` arrives: a dependency for refetching. */
export function useEventCount(pick: (e: Envelope) => boolean): number {
  const l = useLive();
  return l.events.filter(pick).length;
}
