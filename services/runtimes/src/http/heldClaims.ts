import type { LongPollSlots } from '@oan/projection';
import { claimOnce, type Claimed } from '../commands/jobs.ts';
import type { RuntimesContext } from '../commands/context.ts';

/**
 * Claims held with `wait`: between attempts a held claim holds no database connection, only its
 * place among the waiters, and looks again when woken or every `recheckMs`. One account holds at
 * most the slots' cap at once over every runtimes process (each costs a connection at the edge).
 */
export class HeldClaims {
  private readonly ctx: RuntimesContext;
  private readonly recheckMs: number;
  private readonly slots: LongPollSlots;
  constructor(ctx: RuntimesContext, recheckMs: number, slots: LongPollSlots) {
    this.ctx = ctx;
    this.recheckMs = recheckMs;
    this.slots = slots;
  }

  /**
   * Claims until a job is handed out, `waitSeconds` pass or `signal` aborts (the client went away).
   * Undefined when the account holds too many already.
   */
  async hold(
    q: { accountId: string; runtimeId: string; worker: string; waitSeconds: number },
    signal: AbortSignal,
  ): Promise<Claimed | null | undefined> {
    const release = await this.slots.take(q.accountId, q.waitSeconds);
    if (!release) return undefined;
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
      await release();
    }
  }
}
