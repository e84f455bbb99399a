import type { MikroORM } from '@oan/db';
import type { Waiters } from '../infra/wake.ts';

/** What the runtimes commands need: the database, the clock, and the held claims to wake. */
export interface RuntimesContext {
  orm: MikroORM;
  now: () => Date;
  ids: () => string;
  waiters: Waiters;
}
