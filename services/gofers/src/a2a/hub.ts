import { DefaultExecutionEventBusManager, type ExecutionEventBusManager } from '@a2a-js/sdk/server';
import type { MikroORM } from '@oan/db';
import type { GofersConfig } from '../config.ts';
import { createA2aPush, type A2APush, type PushLog } from './push/index.ts';
import { callerOf } from './caller.ts';

/**
 * What the A2A pieces of one gofers process share: the event buses of the tasks running or waiting
 * here (a streaming caller, a subscriber), the tasks canceled while their turn runs, and the push
 * notifications' store, sender and delivery loop. The routes and the owner-answers port use one.
 */
export interface A2AHub {
  buses: ExecutionEventBusManager;
  canceled: Set<string>;
  push: A2APush;
}

export function createA2AHub(deps: { orm: MikroORM; config: GofersConfig; log: PushLog }): A2AHub {
  return {
    buses: new DefaultExecutionEventBusManager(),
    canceled: new Set<string>(),
    push: createA2aPush({ orm: deps.orm, config: deps.config, log: deps.log, callerOf }),
  };
}
