import type { AuthenticatedPrincipal } from '@oan/auth';
import type { ApiKeyPermission } from '@oan/protocol';
import type { JobRow } from '../infra/jobStore.ts';
import type { RuntimeRow } from '../infra/runtimeStore.ts';
import type * as s from './schemas.ts';
import type { z } from 'zod';

/** A timestamptz as the API writes it (whatever type the driver returned it as). */
const iso = (t: Date | string) => new Date(t).toISOString();
const isoOrNull = (t: Date | string | null) => (t === null ? null : iso(t));

export const runtimeView = (r: RuntimeRow): z.infer<typeof s.runtime> => ({
  runtimeId: r.id,
  name: r.name,
  policy: r.policy,
  version: r.version,
  state: 'active',
  createdAt: iso(r.created_at),
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
  createdAt: iso(j.created_at),
  updatedAt: iso(j.updated_at),
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
  const lease = JSON.stringify({
    jobId: j.id,
    attempts: j.attempts,
    leaseOwner: j.lease_owner,
    version: j.version,
    leaseUntil: isoOrNull(j.lease_until),
  });
  return `{"job":{"event":${envelope},${lease.slice(1)}}`;
}

/** Whether the caller may act on a route needing `permission` (an OAN JWT acts as the account itself). */
export const keyMay = (p: AuthenticatedPrincipal) => (permission: ApiKeyPermission) =>
  p.via !== 'apiKey' || p.permissions.includes(permission);
