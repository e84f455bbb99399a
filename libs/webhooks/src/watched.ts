/**
 * The accounts a delivery loop has endpoints for, as of its last read: a stored envelope of any
 * other account has nothing for the loop to send, so it need not start a sweep (a fleet-wide query)
 * for it. The set is read again by the loop's sweeps once it is `maxAgeMs` old; an endpoint added
 * since (on any replica) is found by the loop's periodic sweep, as a missed push entry always was.
 */
export class WatchedAccounts {
  private accounts: Set<string> | undefined;
  private readAt = 0;

  private readonly load: () => Promise<Iterable<string>>;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  constructor(load: () => Promise<Iterable<string>>, maxAgeMs: number, now: () => number = Date.now) {
    this.load = load;
    this.maxAgeMs = maxAgeMs;
    this.now = now;
  }

  /** Whether an envelope of `accountId` may have work: true until the set was first read. */
  mayHaveWork(accountId: string): boolean {
    return this.accounts === undefined || this.accounts.has(accountId);
  }

  /** Reads the set again when it is `maxAgeMs` old (a sweep calls it before its own query). */
  async refresh(): Promise<void> {
    if (this.accounts !== undefined && this.now() - this.readAt < this.maxAgeMs) return;
    const at = this.now();
    this.accounts = new Set(await this.load());
    this.readAt = at;
  }
}
