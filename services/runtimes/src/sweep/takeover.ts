import type { Logger } from '@oan/http';
import { sql, transaction, type EntityManager } from '@oan/db';
import { oanEventSql } from '@oan/projection';
import type { RuntimesContext } from '../commands/context.ts';
import { ingest, NO_PENDING_REPLY, type JobRow } from '../infra/jobStore.ts';
import type { NotifyOwner, TakeoverReason } from '../infra/ownerNotices.ts';
import { ownRuntime, type RuntimeRow } from '../infra/runtimeStore.ts';
import { supersedeAll, supersedeAmong } from '../infra/supersede.ts';
import { GRACE_SECONDS } from '../domain/policy.ts';

/** Jobs handed over (and settled ones closed) per pass; the next pass takes the rest. */
const BATCH = 50;

/** One sweep across every replica at a time: the pass runs under this transaction-scoped advisory lock. */
const SWEEP_LOCK = 'runtimes:takeover-sweep';

/** A runtime's grace, also for a policy stored before the grace existed. */
const graceSql = (r: string) =>
  `make_interval(secs => coalesce((${r}.policy ->> 'graceSeconds')::int, ${GRACE_SECONDS.default}))`;

/** Whether the runtime had no live worker (a claim or heartbeat, else its creation) within its grace. */
const noLiveWorkerSql = (r: string, now: string) =>
  `coalesce(${r}.worker_seen_at, ${r}.created_at) <= ${now}::timestamptz - ${graceSql(r)}`;

type Candidate = JobRow & { account_id: string; runtime_name: string; reason: TakeoverReason };

export interface SweepResult {
  /** False when another replica held the sweep: this pass did nothing. */
  ran: boolean;
  superseded: number;
  handed: number;
}

/**
 * One pass of the takeover sweep (ADR 0032), run by one replica at a time
 * (`pg_try_advisory_xact_lock`; the others skip the pass):
 * 1. runtimes without a live worker read their new envelopes (no claim would), so their decisions
 *    become jobs;
 * 2. open jobs whose decision was settled elsewhere are superseded;
 * 3. jobs whose attempts are used up (`exhausted`, or a last lease that ran out) and jobs of a
 *    runtime without a live worker for its grace (queued, or a lease that ran out) go to the owner:
 *    auth records the `runtime_job_waiting` notice (once per job), then the job is `owner`. A job
 *    whose notice failed stays as it is and is tried again at the next pass.
 * The jobs are held (`for update skip locked`) from the choice to the write, so a claim never takes
 * one that is being handed over.
 */
export async function sweepOnce(
  ctx: RuntimesContext,
  notify: NotifyOwner,
  log?: Pick<Logger, 'warn'>,
): Promise<SweepResult> {
  const now = ctx.now();
  await readForIdleRuntimes(ctx, now);
  return transaction(ctx.orm, async (em) => {
    const [lock] = await sql<{ ok: boolean }>(
      em,
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok',
      [SWEEP_LOCK],
    );
    if (!lock?.ok) return { ran: false, superseded: 0, handed: 0 };
    const superseded = await supersedeAll(em, now, BATCH);
    const candidates = await takeoverCandidates(em, now);
    const settled = new Set<string>();
    for (const accountId of new Set(candidates.map((c) => c.account_id))) {
      const own = candidates.filter((c) => c.account_id === accountId);
      for (const id of await supersedeAmong(em, accountId, own, now)) settled.add(id);
    }
    let handed = 0;
    for (const job of candidates) {
      if (settled.has(job.id)) continue;
      try {
        await notify({
          accountId: job.account_id,
          runtimeId: job.runtime_id,
          runtimeName: job.runtime_name,
          jobId: job.id,
          eventId: job.event_id,
          eventSeq: String(job.seq),
          eventType: job.type,
          goferId: job.gofer_id,
          reason: job.reason,
        });
      } catch (err) {
        // auth is away: this job and the rest wait for the next pass
        log?.warn({ err, jobId: job.id }, 'runtime takeover notice failed');
        break;
      }
      await sql(
        em,
        `update runtimes.jobs set state = 'owner', owner_reason = ?, lease_owner = null, lease_until = null,
           updated_at = ? where id = ?`,
        [job.reason, now, job.id],
      );
      handed += 1;
    }
    return { ran: true, superseded: superseded + settled.size, handed };
  });
}

/** The jobs to hand to the owner now, held for this transaction, with why. */
function takeoverCandidates(em: EntityManager, now: Date): Promise<Candidate[]> {
  const expired = `(j.state = 'leased' and j.lease_until <= ?::timestamptz and ${NO_PENDING_REPLY('j')})`;
  const usedUp = `(j.state = 'exhausted' or (${expired} and j.attempts >= (r.policy ->> 'maxAttempts')::int))`;
  return sql<Candidate>(
    em,
    `select j.*, r.account_id, r.name as runtime_name,
            case when ${usedUp} then 'attempts_exhausted' else 'no_live_worker' end as reason
       from runtimes.jobs j join runtimes.runtimes r on r.id = j.runtime_id
      where j.state in ('queued', 'leased', 'exhausted')
        and (${usedUp} or ((j.state = 'queued' or ${expired}) and ${noLiveWorkerSql('r', '?')}))
      order by j.created_at, j.seq limit ? for update of j skip locked`,
    [now, now, now, now, BATCH],
  );
}

/**
 * Runtimes without a live worker that have unread envelopes read them (as a claim would), one short
 * transaction each, so that their decisions become jobs the sweep can hand over.
 */
async function readForIdleRuntimes(ctx: RuntimesContext, now: Date): Promise<void> {
  const idle = await sql<Pick<RuntimeRow, 'id' | 'account_id'>>(
    ctx.orm.em.fork(),
    `select r.id, r.account_id from runtimes.runtimes r
      where ${noLiveWorkerSql('r', '?')} and ${oanEventSql.hasEnvelopeAfter('r.account_id', 'r.cursor_seq')}
      limit ?`,
    [now, BATCH],
  );
  for (const r of idle) {
    await transaction(ctx.orm, async (tx) => {
      const locked = await ownRuntime(tx, r.account_id, r.id, true);
      if (locked) await ingest(tx, locked, now);
    });
  }
}

/**
 * Runs `sweepOnce` every `intervalMs` until stopped; a pass never overlaps the previous one of this
 * process, and a failed pass is logged and the next one runs as usual.
 */
export function startSweep(
  ctx: RuntimesContext,
  notify: NotifyOwner,
  intervalMs: number,
  log: Pick<Logger, 'warn' | 'error'>,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = sweepOnce(ctx, notify, log)
      .catch((err: unknown) => log.error({ err }, 'runtime takeover sweep failed'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
