/**
 * Held claims waiting for work, by account. Woken by the push stream when an envelope of the
 * account is stored, by this process when a job is given back, and by the fleet's runtime wakes (a
 * release or a lease run out seen by another process); a held claim also looks again on its own
 * every recheck interval, in case a wake was lost.
 */
export class Waiters {
  private readonly byAccount = new Map<string, Set<() => void>>();

  /** Resolves when woken, after `ms`, or when `signal` aborts, whichever is first. */
  wait(accountId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.byAccount.get(accountId) ?? new Set<() => void>();
      this.byAccount.set(accountId, set);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0) this.byAccount.delete(accountId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener('abort', done);
      set.add(done);
    });
  }

  wake(accountId: string): void {
    for (const done of [...(this.byAccount.get(accountId) ?? [])]) done();
  }

  /** How many claims are held for the account now. */
  held(accountId: string): number {
    return this.byAccount.get(accountId)?.size ?? 0;
  }
}
