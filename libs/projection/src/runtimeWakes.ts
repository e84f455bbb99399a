import type { Redis } from 'ioredis';

/**
 * A runtime of the account has jobs to claim: what the runtimes processes publish and the gateways
 * emit to opted-in sockets as `runtime_jobs` (docs/runtimes.md). A hint, not a fact: it may come
 * twice or after the jobs were claimed; the claim decides.
 */
export interface RuntimeJobsWake {
  runtimeId: string;
  name: string;
  /** Jobs claimable when it was published: queued, or leased with the lease run out. */
  queued: number;
}

/** The Redis pub/sub channel of the fleet's runtime wakes; a message is `{a, w}` (account, wake). */
export const runtimeWakesChannel = (prefix: string) => `${prefix}runtime-wakes`;

export async function publishRuntimeWake(
  redis: Redis,
  prefix: string,
  accountId: string,
  wake: RuntimeJobsWake,
): Promise<void> {
  await redis.publish(runtimeWakesChannel(prefix), JSON.stringify({ a: accountId, w: wake }));
}

/** The account and the wake of a channel message; null for anything else. */
export function parseRuntimeWake(message: string): { accountId: string; wake: RuntimeJobsWake } | null {
  let m: unknown;
  try {
    m = JSON.parse(message);
  } catch {
    return null;
  }
  if (typeof m !== 'object' || m === null) return null;
  const { a, w } = m as { a?: unknown; w?: Partial<RuntimeJobsWake> };
  if (typeof a !== 'string' || typeof w !== 'object' || w === null) return null;
  if (typeof w.runtimeId !== 'string' || typeof w.name !== 'string' || typeof w.queued !== 'number')
    return null;
  return { accountId: a, wake: { runtimeId: w.runtimeId, name: w.name, queued: w.queued } };
}
