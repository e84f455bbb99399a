import { v5 as uuidv5 } from 'uuid';
import { sql, type EntityManager } from '@oan/db';
import { fetchEventsWithIds } from '@oan/projection';
import * as lease from '../domain/lease.ts';
import { wants, type Policy } from '../domain/policy.ts';
import type { ReplyCall } from '../domain/reply.ts';
import { advanceCursor, type RuntimeRow } from './runtimeStore.ts';

export interface JobRow {
  id: string;
  runtime_id: string;
  event_id: string;
  seq: string;
  type: string;
  gofer_id: string | null;
  state: lease.JobState;
  attempts: number;
  version: number;
  lease_owner: string | null;
  lease_until: Date | null;
  progress: { percent?: number; note?: string } | null;
  /** Why a job in state `owner` was handed to the owner. */
  owner_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Envelopes read per query while turning the log into jobs. */
const PAGE = 200;

/** A job's id is a name of (runtime, event): the same envelope read again, or rebuilt, is the same job. */
export const jobIdOf = (runtimeId: string, eventId: string) => uuidv5(eventId, runtimeId);

interface EnvelopeHead {
  type: string;
  goferId?: string;
  reply?: unknown;
}

/**
 * Reads the account's envelopes after the runtime's cursor and makes a job of each one its policy
 * wants, in seq order, then moves the cursor. The runtime row is locked (`ownRuntime(…, true)` in
 * the same transaction), so configure and two readers take turns; a job that exists already is left
 * as it is.
 */
export async function ingest(em: EntityManager, runtime: RuntimeRow, now: Date): Promise<void> {
  let cursor = runtime.cursor_seq;
  for (;;) {
    const page = await fetchEventsWithIds(em, runtime.account_id, cursor, PAGE);
    for (const e of page) {
      const head = JSON.parse(e.envelope) as EnvelopeHead;
      const facts = { type: head.type, goferId: head.goferId, hasReply: head.reply !== undefined };
      if (!wants(runtime.policy, facts)) continue;
      await sql(
        em,
        `insert into runtimes.jobs (id, runtime_id, event_id, seq, type, gofer_id, state, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, 'queued', ?, ?) on conflict (runtime_id, event_id) do nothing`,
        [
          jobIdOf(runtime.id, e.eventId),
          runtime.id,
          e.eventId,
          e.seq,
          head.type,
          head.goferId ?? null,
          now,
          now,
        ],
      );
    }
    const last = page.at(-1);
    if (last) {
      cursor = last.seq;
      await advanceCursor(em, runtime.id, cursor);
    }
    if (page.length < PAGE) return;
  }
}

/** Queued jobs the new policy no longer wants are dropped (claimed ones finish under their lease). */
export async function reevaluate(
  em: EntityManager,
  runtimeId: string,
  policy: Policy,
  now: Date,
): Promise<void> {
  const queued = await sql<Pick<JobRow, 'id' | 'type' | 'gofer_id'>>(
    em,
    `select id, type, gofer_id from runtimes.jobs where runtime_id = ? and state = 'queued' for update`,
    [runtimeId],
  );
  const unwanted = queued
    .filter((j) => !wants(policy, { type: j.type, goferId: j.gofer_id ?? undefined, hasReply: true }))
    .map((j) => j.id);
  if (unwanted.length === 0) return;
  await sql(
    em,
    `update runtimes.jobs set state = 'dropped', updated_at = ? where id in (select jsonb_array_elements_text(?::jsonb)::uuid)`,
    [now, JSON.stringify(unwanted)],
  );
}

export const leaseOf = (j: JobRow): lease.JobLease => ({
  state: j.state,
  attempts: j.attempts,
  leaseOwner: j.lease_owner,
  version: j.version,
  leaseUntil: j.lease_until === null ? null : new Date(j.lease_until),
});

/** Writes a job's lease (and progress when given) and returns the row. */
export async function write(em: EntityManager, id: string, l: lease.JobLease, now: Date, progress?: unknown) {
  const [row] = await sql<JobRow>(
    em,
    `update runtimes.jobs set state = ?, attempts = ?, version = ?, lease_owner = ?, lease_until = ?,
       progress = ${progress === undefined ? 'progress' : '?::jsonb'}, updated_at = ? where id = ? returning *`,
    [
      l.state,
      l.attempts,
      l.version,
      l.leaseOwner,
      l.leaseUntil,
      ...(progress === undefined ? [] : [JSON.stringify(progress)]),
      now,
      id,
    ],
  );
  return row!;
}

/**
 * A job whose `handled` reply is recorded but not yet carried out (ADR 0031) stays with its lease
 * holder until the reply ends, even past the lease: no claim, supersession or takeover touches it.
 */
export const NO_PENDING_REPLY = (t: string): string =>
  `not exists (select 1 from runtimes.job_finishes f where f.job_id = ${t}.id and f.state = 'pending')`;

/**
 * Hands the runtime's first claimable job (seq order) to `worker`, or null. Rows another claim holds
 * are skipped (`skip locked`), so concurrent claims never wait for each other nor take one job
 * twice; each locks one row at a time, so racing claims never hide from one another the rows they
 * will not take. A job whose attempts are used up is closed on the way. (Settled decisions were
 * closed just before, by `supersedeNextClaimable`.)
 */
export async function claimNext(
  em: EntityManager,
  runtime: RuntimeRow,
  worker: string,
  now: Date,
  /** Endpoint dispatch: a job its endpoint gave back waits until its `dispatch_after`. */
  opts: { due?: boolean } = {},
): Promise<JobRow | null> {
  const due = opts.due ? 'and (dispatch_after is null or dispatch_after <= ?)' : '';
  for (;;) {
    // a job whose reply is being carried out stays with its lease until that ends (ADR 0031)
    const candidates = await sql<JobRow>(
      em,
      `select * from runtimes.jobs j where runtime_id = ?
         and (state = 'queued' or (state = 'leased' and lease_until <= ?)) ${due}
         and ${NO_PENDING_REPLY('j')}
       order by seq limit 1 for update skip locked`,
      [runtime.id, now, ...(opts.due ? [now] : [])],
    );
    if (candidates.length === 0) return null;
    for (const job of candidates) {
      const next = lease.claim(leaseOf(job), worker, now, runtime.policy);
      // progress belongs to a lease: a new one starts without it.
      const row = await write(em, job.id, next, now, null);
      if (next.state === 'leased') return row;
    }
  }
}

export async function jobOf(em: EntityManager, runtimeId: string, jobId: string, lock = false) {
  if (!/^[0-9a-f-]{36}$/i.test(jobId)) return null;
  const [row] = await sql<JobRow>(
    em,
    `select * from runtimes.jobs where id = ? and runtime_id = ?${lock ? ' for update' : ''}`,
    [jobId, runtimeId],
  );
  return row ?? null;
}

/** Extends the lease of the holder (null when it does not hold it: nothing is written). */
export async function heartbeat(
  em: EntityManager,
  job: JobRow,
  h: { leaseOwner: string; version: number; progress?: { percent?: number; note?: string } | undefined },
  leaseSeconds: number,
  now: Date,
): Promise<JobRow | null> {
  const current = leaseOf(job);
  if (!lease.holds(current, h.leaseOwner, h.version, now)) return null;
  return write(em, job.id, lease.extend(current, now, leaseSeconds), now, h.progress ?? job.progress);
}

export interface FinishRecord {
  job_id: string;
  version: number;
  lease_owner: string;
  outcome: string;
  /** `pending`: a reply recorded, not carried out yet; `done`: answered. */
  state: 'pending' | 'done';
  /** The null of a finish without a reply. */
  reply: Record<string, unknown> | null;
  call: ReplyCall | null;
  answer: object | null;
  answer_text: string | null;
}

/** The recorded finish of a lease (job, version), or null. */
export async function finishOf(
  em: EntityManager,
  jobId: string,
  version: number,
): Promise<FinishRecord | null> {
  const [row] = await sql<FinishRecord>(
    em,
    'select * from runtimes.job_finishes where job_id = ? and version = ?',
    [jobId, version],
  );
  return row ?? null;
}

/** Applies a finish of the holder and records its answer under (job, version) for retries. */
export async function recordFinish<T extends object>(
  em: EntityManager,
  job: JobRow,
  f: { leaseOwner: string; version: number; outcome: lease.FinishOutcome },
  maxAttempts: number,
  now: Date,
  answer: (row: JobRow) => T,
): Promise<T> {
  const row = await write(em, job.id, lease.finish(leaseOf(job), f.outcome, maxAttempts), now);
  const result = answer(row);
  await sql(
    em,
    `insert into runtimes.job_finishes (job_id, version, lease_owner, outcome, answer) values (?, ?, ?, ?, ?::jsonb)`,
    [job.id, f.version, f.leaseOwner, f.outcome, JSON.stringify(result)],
  );
  return result;
}

export const listJobs = (
  em: EntityManager,
  runtimeId: string,
  q: { state?: lease.JobState | undefined; after: string; limit: number },
) =>
  sql<JobRow>(
    em,
    `select * from runtimes.jobs where runtime_id = ? and seq > ?::bigint
       ${q.state ? 'and state = ?' : ''} order by seq limit ?`,
    [runtimeId, q.after, ...(q.state ? [q.state] : []), q.limit],
  );
