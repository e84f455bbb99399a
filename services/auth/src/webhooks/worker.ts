import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { disableWebhook } from '../commands/accountAdmin.ts';
import type { AuthContext } from '../commands/context.ts';
import type { EntityManager } from '@oan/db';
import type { WebhookRow } from '../infra/webhookStore.ts';
import {
  dueWebhooks,
  nextEnvelopes,
  recordAttempt,
  webhookAccounts,
  webhookById,
  type QueuedEnvelope,
} from './queue.ts';
import {
  afterFailure,
  Sweeper,
  WatchedAccounts,
  type Attempt,
  type RetrySchedule,
  type WebhookSender,
} from '@oan/webhooks';

/** Envelopes read per query; each is still sent and recorded one by one. */
const PAGE = 50;

export interface WebhookDeliveryDeps {
  ctx: AuthContext;
  /** The connection that holds the per-endpoint locks (one per process). */
  databaseUrl: string;
  sender: WebhookSender;
  schedule: RetrySchedule;
  pollMs: number;
  /** Endpoints this process delivers to at once (each has at most one request in flight). */
  maxInFlight?: number;
  log: FastifyBaseLogger;
}

/**
 * Delivers every account's envelopes to its webhook endpoints, from the log (ADR 0018): an
 * endpoint's cursor and attempts are rows, the envelopes are `read.oan_event`, so a process that
 * dies (or all of them) resumes where the last commit left it. Work is found by a short poll and by
 * `wake()` (the push stream). One endpoint is worked by one process at a time: a session advisory
 * lock on a dedicated connection, which Postgres frees the moment that process dies.
 */
export class WebhookDelivery {
  private readonly draining = new Set<string>();
  private readonly active = new Set<Promise<void>>();
  private lock: Promise<pg.Client> | undefined;
  private readonly loop: Sweeper;
  private readonly watched: WatchedAccounts;

  private readonly deps: WebhookDeliveryDeps;
  constructor(deps: WebhookDeliveryDeps) {
    this.deps = deps;
    this.loop = new Sweeper(
      () => this.sweep(),
      deps.pollMs,
      (err) => deps.log.warn({ err }, 'webhook sweep failed'),
    );
    this.watched = new WatchedAccounts(() => webhookAccounts(deps.ctx.orm.em.fork()), deps.pollMs);
  }

  private get stopped(): boolean {
    return this.loop.stopped;
  }

  start(): void {
    this.loop.start();
  }

  /** Looks for due endpoints now (coalesced: one sweep at a time, one more if woken meanwhile). */
  wake(): void {
    this.loop.wake();
  }

  /** A stored envelope of `accountId` (the push stream): a sweep now if the account has an endpoint. */
  wakeFor(accountId: string): void {
    if (this.watched.mayHaveWork(accountId)) this.loop.wake();
  }

  private async sweep(): Promise<void> {
    const max = this.deps.maxInFlight ?? 64;
    await this.watched.refresh();
    const ids = await dueWebhooks(this.deps.ctx.orm.em.fork(), max * 2);
    for (const id of ids) {
      if (this.stopped || this.draining.size >= max) break;
      if (this.draining.has(id)) continue;
      this.draining.add(id);
      const run: Promise<void> = this.drain(id)
        .catch((err: unknown) => this.deps.log.warn({ err, webhookId: id }, 'webhook delivery failed'))
        .finally(() => {
          this.draining.delete(id);
          this.active.delete(run);
        });
      this.active.add(run);
    }
  }

  private async drain(id: string): Promise<void> {
    const lock = await this.lockConnection();
    const key = `webhook:${id}`;
    const [row] = (
      await lock.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [key])
    ).rows;
    if (!row?.ok) return; // another process has it
    try {
      while (!this.stopped && (await this.step(id)));
    } finally {
      await lock
        .query('select pg_advisory_unlock(hashtextextended($1, 0))', [key])
        .catch((err: unknown) => this.deps.log.warn({ err }, 'webhook unlock failed'));
    }
  }

  /**
   * Attempts at the endpoint's next envelopes (read a page at a time, sent one by one); true when
   * more may follow at once, false when it is done, waiting for a retry, disabled or gone.
   */
  private async step(id: string): Promise<boolean> {
    const { ctx } = this.deps;
    const em = ctx.orm.em.fork();
    let w = await webhookById(em, id);
    if (!w || w.disabled_at) return false;
    if (w.next_attempt_at && new Date(w.next_attempt_at).getTime() > ctx.now().getTime()) return false;
    const page = await nextEnvelopes(em, w.account_id, w.last_seq, PAGE);
    for (const ev of page) {
      if (this.stopped) return false;
      const sentAt = ctx.now();
      const attempt = await this.deps.sender.send(w, ev.eventId, ev.envelope, sentAt);
      if (!attempt.delivered) {
        await this.failed(em, w, ev, attempt, sentAt);
        return false;
      }
      if (!(await recordAttempt(em, w, ev, attempt, sentAt, null))) return false;
      w = { ...w, last_seq: ev.seq, attempt: 0, failing_since: null, next_attempt_at: null };
    }
    return page.length === PAGE;
  }

  /** Records a failed attempt and schedules the retry, or disables the endpoint past the give-up period. */
  private async failed(em: EntityManager, w: WebhookRow, ev: QueuedEnvelope, attempt: Attempt, sentAt: Date) {
    const { ctx, schedule } = this.deps;
    const failingSince = w.failing_since ? new Date(w.failing_since) : sentAt;
    const next = afterFailure(w.attempt + 1, failingSince, ctx.now(), schedule);
    const retryAt = next.kind === 'retry' ? next.at : null;
    if (!(await recordAttempt(em, w, ev, attempt, sentAt, { failingSince, retryAt }))) return;
    if (retryAt) {
      setTimeout(() => this.wake(), Math.max(0, retryAt.getTime() - Date.now()) + 5).unref();
      return;
    }
    const reason = attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'failed');
    await disableWebhook(ctx, { accountId: w.account_id, webhookId: w.id, url: w.url, reason });
    this.deps.log.info({ webhookId: w.id, reason }, 'webhook disabled after the give-up period');
  }

  /** The lock connection, opened again after a failure (its locks went with it). */
  private lockConnection(): Promise<pg.Client> {
    if (this.lock) return this.lock;
    const client = new pg.Client({ connectionString: this.deps.databaseUrl });
    const opened = client.connect().then(() => client);
    this.lock = opened;
    client.on('error', (err) => {
      this.deps.log.warn({ err }, 'webhook lock connection lost');
      if (this.lock === opened) this.lock = undefined;
      void client.end().catch(() => undefined);
    });
    opened.catch(() => {
      if (this.lock === opened) this.lock = undefined;
    });
    return opened;
  }

  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.all([...this.active]);
    const lock = await this.lock?.catch(() => undefined);
    await lock?.end().catch(() => undefined);
    await this.deps.sender.close();
  }
}
