import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@oan/db';
import { retryDelayMs, Sweeper, WebhookSender, type Attempt, type UrlPolicy } from '@oan/webhooks';
import { claimDue, forgetDone, record, type ClaimedDelivery, type Outcome } from './queue.ts';
import type { PgPushNotificationStore, PushTarget } from './store.ts';

/** Delivered and given-up notifications are kept this long (to look into), then forgotten. */
const KEEP_DONE_MS = 24 * 3600_000;

/** Where the loop reports: a pino logger fits. Bodies and tokens never reach it. */
export interface PushLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface PushDeliveryOptions {
  orm: MikroORM;
  store: PgPushNotificationStore;
  /** Where a notification may go, checked again on every resolved address at send time. */
  policy: UrlPolicy;
  /** A receiver must answer 2xx within this. */
  timeoutMs: number;
  /** Exponential backoff (jittered) from `baseMs` up to `maxMs`; given up after `maxAttempts`. */
  retry: { baseMs: number; maxMs: number; maxAttempts: number };
  pollMs: number;
  /** Notifications in flight at once from this process. */
  concurrency: number;
  log: PushLog;
  now?: () => Date;
}

/**
 * The headers a receiver authenticates us by, as the SDK's own sender builds them: the config's
 * `authentication` as `Authorization: <scheme> <credentials>`, else its token in
 * `X-A2A-Notification-Token`.
 */
export function authHeaders(target: PushTarget): Record<string, string> {
  const auth = target.authentication;
  if (auth?.scheme && auth.credentials) return { authorization: `${auth.scheme} ${auth.credentials}` };
  if (target.token) return { 'x-a2a-notification-token': target.token };
  return {};
}

/**
 * The Standard Webhooks key of a notification: the config's token as UTF-8 bytes, the one secret the
 * receiver and we share (A2A has no signing secret of its own); without a token it goes unsigned.
 */
export const signingKey = (target: PushTarget): Uint8Array | null =>
  target.token ? new TextEncoder().encode(target.token) : null;

/**
 * Delivers the queued A2A push notifications (`gofers.a2a_push_deliveries`). Every gofers process
 * runs one; a row is taken under a lease (`for update skip locked`), so no two processes send it at
 * once, and one whose process died is taken again when the lease runs out. Each queue (a task and a
 * config) goes in order: its next row waits until the one before is delivered or given up. A failed
 * attempt is tried again with libs/webhooks' backoff, up to `maxAttempts`. Bodies and tokens are never
 * logged.
 */
export class PushDelivery {
  private readonly active = new Set<Promise<void>>();
  private readonly sender: WebhookSender;
  private readonly loop: Sweeper;
  private lastForget = 0;

  private readonly opts: PushDeliveryOptions;
  constructor(opts: PushDeliveryOptions) {
    this.opts = opts;
    this.sender = new WebhookSender({
      policy: opts.policy,
      timeoutMs: opts.timeoutMs,
      userAgent: 'OAN-A2A-Push/1',
    });
    this.loop = new Sweeper(
      () => this.sweep(),
      opts.pollMs,
      (err) => opts.log.warn({ err }, 'a2a push sweep failed'),
    );
  }

  private now = () => (this.opts.now ?? (() => new Date()))();

  start(): void {
    this.loop.start();
  }

  /** Looks for due notifications now (coalesced: one sweep at a time, one more if woken meanwhile). */
  wake(): void {
    this.loop.wake();
  }

  private async sweep(): Promise<void> {
    const free = this.opts.concurrency - this.active.size;
    if (this.loop.stopped || free <= 0) return;
    const now = this.now();
    // A send ends within its timeout; the lease outlasts it with room for the record.
    const leaseUntil = new Date(now.getTime() + 2 * this.opts.timeoutMs + 5_000);
    const claimed = await claimDue(this.opts.orm.em.fork(), now, randomUUID(), leaseUntil, free);
    for (const d of claimed) {
      const run: Promise<void> = this.deliver(d)
        .catch((err: unknown) =>
          this.opts.log.warn({ err, deliveryId: d.id, taskId: d.task_id }, 'a2a push delivery failed'),
        )
        .finally(() => {
          this.active.delete(run);
          this.wake(); // the queue's next row, or a row that waited for a free slot
        });
      this.active.add(run);
    }
    if (now.getTime() - this.lastForget > 60_000) {
      this.lastForget = now.getTime();
      await forgetDone(this.opts.orm.em.fork(), new Date(now.getTime() - KEEP_DONE_MS));
    }
  }

  private async deliver(d: ClaimedDelivery): Promise<void> {
    const em = this.opts.orm.em.fork();
    const target = await this.opts.store.target(d.task_id, d.caller_id, d.config_id);
    if (!target) {
      await record(em, d, { kind: 'given-up', error: 'the push notification config was deleted' });
      return;
    }
    const sentAt = this.now();
    const attempt = await this.sender.send(
      { url: target.url, secret: signingKey(target) },
      `a2a-push-${d.id}`,
      d.body,
      sentAt,
      { contentType: d.content_type, headers: authHeaders(target) },
    );
    const outcome = this.outcome(d, attempt);
    if (!(await record(em, d, outcome))) return; // taken again after the lease ran out
    if (outcome.kind === 'retry') {
      setTimeout(() => this.wake(), Math.max(0, outcome.at.getTime() - Date.now()) + 5).unref();
    } else if (outcome.kind === 'given-up') {
      this.opts.log.info(
        { deliveryId: d.id, taskId: d.task_id, configId: d.config_id, error: outcome.error },
        'a2a push notification given up',
      );
    }
  }

  private outcome(d: ClaimedDelivery, attempt: Attempt): Outcome {
    if (attempt.delivered) return { kind: 'delivered' };
    const error = attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'failed');
    const failed = d.attempts + 1;
    const { retry } = this.opts;
    if (failed >= retry.maxAttempts) return { kind: 'given-up', error };
    const delayMs = retryDelayMs(failed, { ...retry, giveUpMs: Number.MAX_SAFE_INTEGER });
    return { kind: 'retry', at: new Date(this.now().getTime() + delayMs), error };
  }

  /** Stops looking for work and lets the sends in flight finish (each within its timeout). */
  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.all([...this.active]);
    await this.sender.close();
  }
}
