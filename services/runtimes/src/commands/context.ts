import type { MikroORM } from '@oan/db';
import type { ReplyClient } from '../infra/replyClient.ts';
import type { Waiters } from '../infra/wake.ts';

/** What the runtimes commands need: the database, the clock, and the held claims to wake. */
export interface RuntimesContext {
  orm: MikroORM;
  now: () => Date;
  ids: () => string;
  waiters: Waiters;
  /** Carries out `handled` replies through the owning services; absent: no reply is carried out (501). */
  replies?: ReplyClient;
}
