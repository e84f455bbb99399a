import type { Logger } from '@oan/http';
import type { RuntimesContext } from './context.ts';
import { sweepPendingReplies, type AnswerText } from './replies.ts';

/**
 * Carries out the replies left pending (ADR 0031) at once and then every `everyMs`: those recorded
 * before the start, then those older than one round (a request still carrying one out is left to
 * it; were both to send it, the owning service's command id makes the second append nothing).
 */
export function startReplySweep(
  ctx: RuntimesContext,
  everyMs: number,
  answer: AnswerText,
  log: Logger,
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const round = async (before: Date) => {
    try {
      const ended = await sweepPendingReplies(ctx, before, answer, (err, p) =>
        log.warn({ err, jobId: p.job_id, version: p.version }, 'pending reply not carried out yet'),
      );
      if (ended > 0) log.info({ ended }, 'pending replies ended');
    } catch (err) {
      log.warn({ err }, 'reply sweep failed');
    }
  };
  running = round(ctx.now());
  const timer = setInterval(() => {
    if (stopped) return;
    running = running.then(() => round(new Date(ctx.now().getTime() - everyMs)));
  }, everyMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
