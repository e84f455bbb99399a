import type { Logger } from '@oan/http';
import { Sweeper, WatchedAccounts } from '@oan/webhooks';
import type { RuntimesContext } from '../commands/context.ts';
import { catchUp, claimFor, type Claimed } from '../commands/jobs.ts';
import { isDomainError } from '../domain/errors.ts';
import type { RuntimeRow } from '../infra/runtimeStore.ts';
import type { Endpoints } from './endpoints.ts';
import { ENDPOINT_WORKER, pushJob } from './push.ts';
import { dueRuntimes, endpointAccounts } from './store.ts';

/** Jobs of one endpoint in flight at once from this process (one while it is `unhealthy`). */
const PER_ENDPOINT = 4;
/** Runtimes looked at per sweep. */
const SWEEP_LIMIT = 200;

export interface DispatcherDeps {
  ctx: RuntimesContext;
  endpoints: Endpoints;
  /** Jobs in flight at once in this process, over all endpoints. */
  concurrency: number;
  pollMs: number;
  log: Pick<Logger, 'warn'>;
}

/**
 * Pushes the jobs of verified endpoint runtimes (ADR 0033). Every runtimes process runs one: a job
 * is taken by the same claim REST workers use (`for update skip locked`, a fenced lease in Postgres
 * owned by `endpoint`), so replicas never hold one job twice, and a process that dies leaves leases
 * that run out and are pushed again. Work is found by a poll and by `wake()` (a new envelope, a
 * verification, a push finished); requests are bounded per endpoint and per process, and each ends
 * before its lease, so a slow endpoint holds only its own jobs.
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, number>();
  private readonly active = new Set<Promise<void>>();
  private readonly loop: Sweeper;
  private readonly watched: WatchedAccounts;

  private readonly deps: DispatcherDeps;
  constructor(deps: DispatcherDeps) {
    this.deps = deps;
    this.loop = new Sweeper(
      () => this.sweep(),
      deps.pollMs,
      (err) => deps.log.warn({ err }, 'runtime dispatch sweep failed'),
    );
    this.watched = new WatchedAccounts(() => endpointAccounts(deps.ctx.orm.em.fork()), deps.pollMs);
    deps.endpoints.wakeDispatch = () => this.wake();
  }

  start(): void {
    this.loop.start();
  }

  /** Looks for due jobs now (coalesced: one sweep at a time, one more if woken meanwhile). */
  wake(): void {
    this.loop.wake();
  }

  /** A stored envelope of `accountId` (the push stream): a sweep now if the account has an endpoint. */
  wakeFor(accountId: string): void {
    if (this.watched.mayHaveWork(accountId)) this.loop.wake();
  }

  private full = () => this.loop.stopped || this.active.size >= this.deps.concurrency;

  private async sweep(): Promise<void> {
    const { ctx } = this.deps;
    await this.watched.refresh();
    const due = await dueRuntimes(ctx.orm.em.fork(), ctx.now(), SWEEP_LIMIT);
    for (const r of due) {
      if (this.full()) return;
      const limit = r.endpoint_state === 'unhealthy' ? 1 : PER_ENDPOINT;
      if ((this.inFlight.get(r.id) ?? 0) >= limit) continue;
      try {
        const runtime = await catchUp(ctx, r.account_id, r.id);
        while (!this.full() && (this.inFlight.get(r.id) ?? 0) < limit) {
          const claimed = await claimFor(ctx, runtime, ENDPOINT_WORKER, { due: true });
          if (!claimed) break;
          this.run(runtime, claimed);
        }
      } catch (err) {
        if (!isDomainError(err)) throw err; // a runtime deleted meanwhile: the next one
      }
    }
  }

  private run(runtime: RuntimeRow, claimed: Claimed): void {
    const { id } = runtime;
    this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    const run: Promise<void> = pushJob(this.deps.endpoints, this.deps.ctx, runtime, claimed)
      .then((retryInMs) => {
        if (retryInMs !== undefined) setTimeout(() => this.wake(), retryInMs + 5).unref();
      })
      .catch((err: unknown) =>
        this.deps.log.warn({ err, runtimeId: id, jobId: claimed.job.id }, 'runtime dispatch failed'),
      )
      .finally(() => {
        const left = (this.inFlight.get(id) ?? 1) - 1;
        if (left > 0) this.inFlight.set(id, left);
        else this.inFlight.delete(id);
        this.active.delete(run);
        this.wake();
      });
    this.active.add(run);
  }

  /** Stops looking for work and lets the pushes in flight finish (each ends before its lease). */
  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.all([...this.active]);
  }
}
