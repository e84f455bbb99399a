import { sql, transaction } from '@oan/db';
import { runDiscoveryOnce, type DiscoveryRunDeps } from './discovery.ts';

/** One sweep across every matching process at a time: a pass runs under this advisory lock. */
const SWEEP_LOCK = 'matching:discovery-sweep';

export interface SweepResult {
  /** False when another process held the sweep: this pass did nothing. */
  ran: boolean;
  proposed: string[];
}

/**
 * One pass of the periodic discovery sweep, run by one matching process at a time
 * (`pg_try_advisory_xact_lock`, held for the pass; the others skip it). Two passes at once would each
 * count only their own proposals against a Gofer's caps, so together they could open more pairings
 * than the caps allow; a pass that dies frees the lock with its connection.
 */
export function sweepDiscoveryOnce(deps: DiscoveryRunDeps): Promise<SweepResult> {
  return transaction(deps.ctx.orm, async (em) => {
    const [lock] = await sql<{ ok: boolean }>(
      em,
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok',
      [SWEEP_LOCK],
    );
    if (!lock?.ok) return { ran: false, proposed: [] };
    return { ran: true, proposed: await runDiscoveryOnce(deps) };
  });
}

/** Runs a pass every `everyMs` until stopped; a pass never overlaps the previous one of this process. */
export function startDiscoverySweep(deps: DiscoveryRunDeps, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = sweepDiscoveryOnce(deps)
      .catch((err: unknown) => deps.logger.warn({ err: (err as Error).message }, 'discovery sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  timer = setTimeout(tick, everyMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
