import { internalCallHeaders } from '@oan/auth';
import type { Replicas } from '@oan/http';
import type { RuntimeJobWaitingNoticed } from '@oan/domain';

export type TakeoverReason = 'attempts_exhausted' | 'no_live_worker';

/** What the owner is told about one job handed to them (the `runtime_job_waiting` notice); auth stamps the time. */
export type JobWaitingNotice = Omit<RuntimeJobWaitingNoticed['data'], 'reason' | 'noticedAt'> & {
  reason: TakeoverReason;
};

/** Records the notice; resolves once auth has it (recorded now or before), rejects otherwise. */
export type NotifyOwner = (notice: JobWaitingNotice) => Promise<void>;

/**
 * Asks auth (`POST /internal/runtime-notices`, with the fleet's internal secret) to record the
 * `runtime_job_waiting` notice on the account's stream. Auth records one per job however often it
 * is asked, so a retry after a timeout or a racing sweep changes nothing.
 */
export function ownerNoticeClient(auth: Replicas, jwtSecret: string, timeoutMs = 5000): NotifyOwner {
  const headers = { 'content-type': 'application/json', ...internalCallHeaders(jwtSecret) };
  return async (notice) => {
    const res = await auth.fetch('/internal/runtime-notices', {
      method: 'POST',
      headers,
      body: JSON.stringify(notice),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`runtime notice refused: ${res.status}`);
  };
}
