import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { BACKGROUND_TAIL_GATHER_MS, PushTail } from '@oan/projection';
import { WebhookSender, type UrlPolicy } from '@oan/webhooks';
import type { AuthContext } from '../commands/context.ts';
import type { AuthConfig } from '../config.ts';
import { WebhookDelivery } from './worker.ts';

export const urlPolicy = (config: AuthConfig): UrlPolicy => ({
  allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
});

/**
 * Starts the delivery loop of this process (ADR 0018) and its push-stream wake-up, on a dedicated
 * Redis connection; returns the stop, which lets the attempts in flight finish.
 */
export async function startWebhookDelivery(
  config: AuthConfig,
  ctx: AuthContext,
  redis: Redis,
  log: FastifyBaseLogger,
): Promise<() => Promise<void>> {
  const delivery = new WebhookDelivery({
    ctx,
    databaseUrl: config.DATABASE_URL,
    sender: new WebhookSender({ policy: urlPolicy(config), timeoutMs: config.WEBHOOK_TIMEOUT_MS }),
    schedule: {
      baseMs: config.WEBHOOK_RETRY_BASE_MS,
      maxMs: config.WEBHOOK_RETRY_MAX_MS,
      giveUpMs: config.WEBHOOK_GIVE_UP_MS,
    },
    pollMs: config.WEBHOOK_POLL_MS,
    log,
  });
  // The projector's push stream only hurries the loop on, for accounts with an endpoint: an entry
  // missed (or of an endpoint made since the loop last read them) waits for the poll. It gathers its
  // reads (ADR 0051).
  const wake = new PushTail(
    redis.duplicate(),
    `${config.REDIS_PREFIX}push`,
    (entry) => {
      if (entry.t === 'env') delivery.wakeFor(entry.a);
    },
    log,
    { gatherMs: BACKGROUND_TAIL_GATHER_MS },
  );
  await wake.start();
  delivery.start();
  return async () => {
    await wake.stop();
    await delivery.stop();
  };
}
