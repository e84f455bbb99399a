import type { Gauge } from 'prom-client';
import type { PushEntry } from '@oan/projection';

/**
 * One held `GET /events?wait=N` (the long-poll connector extension): woken by the push stream the gateway already tails,
 * never by polling the database, so a held request holds no connection. Subscribe before the first
 * page query: an envelope committed after that query is then announced to the subscription, so no
 * wake-up is lost between the query and the wait.
 */
export interface Hold {
  /**
   * Resolves true once an envelope past `since` was announced (at once when one came since the last
   * call), false when `ms` ran out or `signal` aborted first.
   */
  next(ms: number, signal: AbortSignal): Promise<boolean>;
  close(): void;
}

class Subscription implements Hold {
  private woken = false;
  /** Shutting down: every wait ends at once, as if its time were up. */
  private ended = false;
  private notify: (() => void) | undefined;

  readonly since: bigint;
  private readonly release: (s: Subscription) => void;
  constructor(since: bigint, release: (s: Subscription) => void) {
    this.since = since;
    this.release = release;
  }

  wake(): void {
    this.woken = true;
    this.notify?.();
  }

  end(): void {
    this.ended = true;
    this.notify?.();
  }

  next(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.woken || this.ended || signal.aborted || ms <= 0) return Promise.resolve(this.take());
    return new Promise<boolean>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.notify = undefined;
        resolve(this.take());
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.notify = done;
    });
  }

  private take(): boolean {
    const woken = this.woken && !this.ended;
    this.woken = false;
    return woken;
  }

  close(): void {
    this.release(this);
  }
}

/** Every held request of this gateway, by account; fed by the push tail. */
export class LongPolls {
  private readonly byAccount = new Map<string, Set<Subscription>>();
  private closed = false;

  private readonly gauge?: Gauge;
  constructor(gauge?: Gauge) {
    this.gauge = gauge;
  }

  subscribe(accountId: string, since: bigint): Hold {
    let set = this.byAccount.get(accountId);
    if (!set) this.byAccount.set(accountId, (set = new Set()));
    const sub = new Subscription(since, (s) => {
      if (!set.delete(s)) return;
      this.gauge?.dec();
      if (set.size === 0 && this.byAccount.get(accountId) === set) this.byAccount.delete(accountId);
    });
    set.add(sub);
    this.gauge?.inc();
    if (this.closed) sub.end();
    return sub;
  }

  /** A push entry: wakes the account's holds waiting for a seq at or below the entry's. */
  onEntry(entry: PushEntry): void {
    if (entry.t !== 'env') return;
    for (const sub of this.byAccount.get(entry.a) ?? []) if (entry.s > sub.since) sub.wake();
  }

  /** On shutdown: every hold answers now (with whatever its page query finds) instead of at its end. */
  close(): void {
    this.closed = true;
    for (const set of this.byAccount.values()) for (const sub of set) sub.end();
  }

  get size(): number {
    let n = 0;
    for (const set of this.byAccount.values()) n += set.size;
    return n;
  }
}
