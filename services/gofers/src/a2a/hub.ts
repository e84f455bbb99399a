import { DefaultExecutionEventBusManager, type ExecutionEventBusManager } from '@a2a-js/sdk/server';
import type { MikroORM } from '@oan/db';
import type { GofersConfig } from '../config.ts';
import { createA2aPush, type A2APush, type PushLog } from './push/index.ts';
import { callerOf } from './caller.ts';

/**
 * What the A2A pieces of one gofers process share: the event buses of the tasks running or waiting
 * here (a streaming caller, a subscriber), the tasks whose turn runs here and those canceled while
 * it runs, and the push notifications' store, sender and delivery loop. The routes, the
 * owner-answers port and the recovery sweep use one.
 */
export interface A2AHub {
  buses: ExecutionEventBusManager;
  /** Tasks whose turn this process runs now: the recovery sweep leaves them alone. */
  running: Set<string>;
  canceled: Set<string>;
  push: A2APush;
}

export function createA2AHub(deps: { orm: MikroORM; config: GofersConfig; log: PushLog }): A2AHub {
  return {
    buses: new DefaultExecutionEventBusManager(),
    running: new Set<string>(),
    canceled: new Set<string>(),
    push: createA2aPush({ orm: deps.orm, config: deps.config, log: deps.log, callerOf }),
  };
}
