/**
 * The life of one job under fenced leases. A claim hands a job out with a new `version` (the fencing
 * token) and counts an attempt; only the current lease owner with that version, before `leaseUntil`,
 * may heartbeat or finish it. Pure: the store locks the row and applies what these return.
 */

/**
 * `queued`: waiting for a claim (new, released, failed, or its lease ran out); `leased`: held by a
 * worker; `handled`: done, the worker answered through the event's own reply path; `exhausted`:
 * `maxAttempts` used up, never handed out again (the takeover sweep hands it to the owner);
 * `dropped`: no longer wanted by the runtime's policy (re-evaluated by configure before it was
 * claimed); `superseded`: its decision was settled elsewhere (ADR 0032), never handed out again;
 * `owner`: handed to the account's owner (attempts used up, or no live worker for the grace).
 */
export const JOB_STATES = [
  'queued',
  'leased',
  'handled',
  'exhausted',
  'dropped',
  'superseded',
  'owner',
] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * `handled` here is the worker's word that it answered through the event's reply path itself; a
 * `handled` that asks the server to carry out a `reply` is not built yet (the route refuses it).
 */
export type FinishOutcome = 'handled' | 'released' | 'failed';

export interface JobLease {
  state: JobState;
  attempts: number;
  leaseOwner: string | null;
  version: number;
  leaseUntil: Date | null;
}

/** Whether `owner` holding `version` still holds the job at `now`. */
export function holds(job: JobLease, owner: string, version: number, now: Date): boolean {
  return (
    job.state === 'leased' &&
    job.leaseOwner === owner &&
    job.version === version &&
    job.leaseUntil !== null &&
    job.leaseUntil.getTime() > now.getTime()
  );
}

/** A job a claim may take: queued, or leased with its lease run out. */
export function claimable(job: JobLease, now: Date): boolean {
  return (
    job.state === 'queued' || (job.state === 'leased' && job.leaseUntil !== null && job.leaseUntil <= now)
  );
}

/**
 * What a claim does to a claimable job: a new lease and an attempt, or, when every attempt is used
 * up (a lease that ran out counts as the attempt it was), `exhausted` and not handed out.
 */
export function claim(
  job: JobLease,
  owner: string,
  now: Date,
  policy: { maxAttempts: number; leaseSeconds: number },
): JobLease {
  if (job.attempts >= policy.maxAttempts)
    return { ...job, state: 'exhausted', leaseOwner: null, leaseUntil: null };
  return {
    state: 'leased',
    attempts: job.attempts + 1,
    leaseOwner: owner,
    version: job.version + 1,
    leaseUntil: new Date(now.getTime() + policy.leaseSeconds * 1000),
  };
}

/** The lease extended from `now` by the policy's lease. */
export function extend(job: JobLease, now: Date, leaseSeconds: number): JobLease {
  return { ...job, leaseUntil: new Date(now.getTime() + leaseSeconds * 1000) };
}

/**
 * A finish by the lease holder: `handled` closes the job; `released` gives it back without counting
 * the attempt; `failed` counts it, and after the last one the job is `exhausted`.
 */
export function finish(job: JobLease, outcome: FinishOutcome, maxAttempts: number): JobLease {
  if (outcome === 'handled') return { ...job, state: 'handled', leaseOwner: null, leaseUntil: null };
  const attempts = outcome === 'released' ? job.attempts - 1 : job.attempts;
  const state = outcome === 'failed' && attempts >= maxAttempts ? 'exhausted' : 'queued';
  return { ...job, state, attempts, leaseOwner: null, leaseUntil: null };
}
