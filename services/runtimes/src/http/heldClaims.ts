import { claimOnce, type Claimed } from '../commands/jobs.ts';
import type { RuntimesContext } from '../commands/context.ts';

/**
 * Claims held with `wait`: between attempts a held claim holds no database connection, only its
 * place among the waiters, and looks again when woken or every `recheckMs`. One account may hold
 * `max` at once in this process (each costs a connection at the edge).
 */
export class HeldClaims {
  private readonly held = new Map<string, number>();
  private readonly ctx: RuntimesContext;
  private readonly recheckMs: number;
  private readonly max: number;
  constructor(ctx: RuntimesContext, recheckMs: number, max: number) {
    this.ctx = ctx;
    this.recheckMs = recheckMs;
    this.max = max;
  }

  /**
   * Claims until a job is handed out, `waitSeconds` pass or `signal` aborts (the client went away).
   * Undefined when the account holds too many already.
   */
  async hold(
    q: { accountId: string; runtimeId: string; worker: string; waitSeconds: number },
    signal: AbortSignal,
  ): Promise<Claimed | null | undefined> {
    const count = this.held.get(q.accountId) ?? 0;
    if (count >= this.max) return undefined;
    this.held.set(q.accountId, count + 1);
    try {
      const deadline = Date.now() + q.waitSeconds * 1000;
      let claimed: Claimed | null = null;
      while (!claimed && !signal.aborted && Date.now() < deadline) {
        await this.ctx.waiters.wait(q.accountId, Math.min(deadline - Date.now(), this.recheckMs), signal);
        if (signal.aborted) break;
        claimed = await claimOnce(this.ctx, q.accountId, q.runtimeId, q.worker);
      }
      return claimed;
    } finally {
      const left = (this.held.get(q.accountId) ?? 1) - 1;
      if (left > 0) this.held.set(q.accountId, left);
      else this.held.delete(q.accountId);
    }
  }
}
