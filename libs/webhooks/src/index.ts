/**
 * Signed POSTs to URLs an account or a caller registered (webhook endpoints, runtime endpoints, A2A
 * push-notification URLs): where they may go (public addresses, checked again at send time), how they
 * are signed (Standard Webhooks 1.0) and when a failure is tried again.
 */
export { classifyAddress, refuseAddress, refuseUrl, type AddressClass, type UrlPolicy } from './addresses.ts';
export { afterFailure, retryDelayMs, type AfterFailure, type RetrySchedule } from './schedule.ts';
export { newSigningSecret } from './secret.ts';
export {
  WebhookSender,
  type Attempt,
  type Endpoint,
  type SenderOptions,
  type SendOptions,
} from './sender.ts';
export { Sweeper } from './sweeper.ts';
export { WatchedAccounts } from './watched.ts';
