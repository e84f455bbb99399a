// kafkajs 2.2.4's RequestQueue never stops checking for pending requests (tulios/kafkajs#1556,
// #1704; fixes proposed in #1667 and #1768, none released): every check re-arms a timer, and with
// nothing pending and no throttle the delay is negative, so each broker connection of every client
// runs a check about once a millisecond for as long as it is open. Measured here (bench/idle.ts):
// most of an idle fleet's CPU, and the TimeoutNegativeWarning Node 24 prints. The fix skips the timer
// when nothing is pending and no throttle runs: `push` schedules a check itself when it queues a
// request, and an answer or a timeout checks at once. Applied once, to the only kafkajs this
// repository installs, and only to the version it was written against.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The kafkajs release whose RequestQueue this fixes; any other is left alone. */
export const FIXED_KAFKAJS_VERSION = '2.2.4';

interface RequestQueueState {
  pending: unknown[];
  throttledUntil: number;
}

interface RequestQueuePrototype {
  scheduleCheckPendingRequests: (this: RequestQueueState) => void;
  [FIXED]?: true;
}

const FIXED = Symbol.for('oan.kafkajs.requestQueueFix');

/**
 * Makes kafkajs's RequestQueue schedule a check only when one is due; idempotent. Answers whether the
 * fix is in place (false for a kafkajs other than FIXED_KAFKAJS_VERSION).
 */
export function fixRequestQueueIdleLoop(): boolean {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: RequestQueuePrototype;
  };
  const proto = RequestQueue.prototype;
  if (proto[FIXED]) return true;
  const schedule = proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = function (this: RequestQueueState) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  proto[FIXED] = true;
  return true;
}
