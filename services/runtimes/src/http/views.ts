import type { FailureRow } from '../dispatch/store.ts';
import type { AuthenticatedPrincipal } from '@oan/auth';
import type { ApiKeyPermission } from '@oan/protocol';
import type { JobRow } from '../infra/jobStore.ts';
import type { RuntimeRow } from '../infra/runtimeStore.ts';
import type { WaitingRow } from '../commands/takeover.ts';
import { normalizePolicy } from '../domain/policy.ts';
import type * as s from './schemas.ts';
import type { z } from 'zod';

/** A timestamptz as the API writes it (whatever type the driver returned it as). */
const iso = (t: Date | string) => new Date(t).toISOString();
const isoOrNull = (t: Date | string | null) => (t === null ? null : iso(t));

/** A runtime as the API shows it; an endpoint's secret never (only the create answer carries it). */
export const runtimeView = (r: RuntimeRow, failures: FailureRow[] = []): z.infer<typeof s.runtime> => ({
  runtimeId: r.id,
  name: r.name,
  // a policy stored before a setting existed reads with its default
  policy: normalizePolicy(r.policy),
  version: r.version,
  state: r.endpoint_state ?? 'active',
  createdAt: iso(r.created_at),
  ...(r.endpoint === null
    ? {}
    : {
        endpoint: r.endpoint,
        health: {
          lastSeenAt: isoOrNull(r.last_seen_at),
          verifiedAt: isoOrNull(r.verified_at),
          consecutiveFailures: r.consecutive_failures,
          recentFailures: failures
            .filter((f) => f.runtime_id === r.id)
            .map((f) => ({
              at: iso(f.at),
              kind: f.kind,
              jobId: f.job_id,
              statusCode: f.status_code,
              error: f.error,
            })),
        },
      }),
});

export const jobView = (j: JobRow): z.infer<typeof s.job> => ({
  jobId: j.id,
  seq: j.seq,
  eventId: j.event_id,
  type: j.type as z.infer<typeof s.job>['type'],
  ...(j.gofer_id === null ? {} : { goferId: j.gofer_id }),
  state: j.state,
  attempts: j.attempts,
  leaseOwner: j.lease_owner,
  version: j.version,
  leaseUntil: isoOrNull(j.lease_until),
  progress: j.progress,
  ...(j.state === 'owner' && j.owner_reason !== null
    ? { ownerReason: j.owner_reason as 'attempts_exhausted' | 'no_live_worker' }
    : {}),
  createdAt: iso(j.created_at),
  updatedAt: iso(j.updated_at),
});

export const waitingView = (w: WaitingRow): z.infer<typeof s.waitingJob> => ({
  ...jobView(w),
  runtimeId: w.runtime_id,
  runtimeName: w.runtime_name,
  event: JSON.parse(w.envelope) as Record<string, unknown>,
});

/**
 * A reply finish's answer as text: the job, and the owning service's status and body as it sent them
 * (kept and served byte for byte on a retry).
 */
export function replyAnswerText(j: JobRow, sent: { status: number; text: string }): string {
  let body = 'null';
  try {
    JSON.parse(sent.text);
    body = sent.text;
  } catch {
    // an empty or non-JSON body is answered as null
  }
  return `{"job":${JSON.stringify(jobView(j))},"reply":{"status":${sent.status},"body":${body}}}`;
}

/**
 * The claim answer as text, with the stored envelope spliced in unchanged, so `event` is
 * byte-identical to the item `GET /events` serves.
 */
export function claimText(j: JobRow, envelope: string): string {
  return `{"job":${jobText(j, envelope)}}`;
}

/** The claimed job as text (what a claim answers under `job`, and the body of a push). */
export function jobText(j: JobRow, envelope: string): string {
  const lease = JSON.stringify({
    jobId: j.id,
    attempts: j.attempts,
    leaseOwner: j.lease_owner,
    version: j.version,
    leaseUntil: isoOrNull(j.lease_until),
  });
  return `{"event":${envelope},${lease.slice(1)}`;
}

/** Whether the caller may act on a route needing `permission` (an OAN JWT acts as the account itself). */
export const keyMay = (p: AuthenticatedPrincipal) => (permission: ApiKeyPermission) =>
  p.via !== 'apiKey' || p.permissions.includes(permission);
