import { WebhookSender, type UrlPolicy } from '@oan/webhooks';
import type { RuntimesConfig } from '../config.ts';
import type { HealthThresholds } from '../domain/health.ts';

/** How this process talks to runtime endpoints: where it may send, how long it waits, when it gives up. */
export interface EndpointSettings {
  policy: UrlPolicy;
  timeoutMs: number;
  retry: { baseMs: number; maxMs: number };
  thresholds: HealthThresholds;
}

export const endpointSettings = (config: RuntimesConfig): EndpointSettings => ({
  policy: { allowLoopback: config.RUNTIMES_ALLOW_LOOPBACK },
  timeoutMs: config.RUNTIMES_DISPATCH_TIMEOUT_MS,
  retry: { baseMs: config.RUNTIMES_DISPATCH_RETRY_BASE_MS, maxMs: config.RUNTIMES_DISPATCH_RETRY_MAX_MS },
  thresholds: {
    unhealthyAfter: config.RUNTIMES_UNHEALTHY_AFTER,
    disableAfter: config.RUNTIMES_DISABLE_AFTER,
  },
});

/**
 * The signed sender of webhooks (Standard Webhooks signatures, public addresses checked again at
 * connect time, no redirects), shared by the verification route and the dispatcher of one process.
 */
export class Endpoints {
  readonly sender: WebhookSender;
  readonly settings: EndpointSettings;
  /** Set by this process's dispatcher: a verified endpoint's jobs are pushed without waiting for the poll. */
  wakeDispatch: () => void = () => undefined;
  constructor(settings: EndpointSettings) {
    this.settings = settings;
    this.sender = new WebhookSender({
      policy: settings.policy,
      timeoutMs: settings.timeoutMs,
      userAgent: 'OAN-Runtimes/1',
    });
  }

  close(): Promise<void> {
    return this.sender.close();
  }
}
