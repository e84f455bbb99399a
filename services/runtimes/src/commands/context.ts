import type { MikroORM } from '@oan/db';
import type { ReplyClient } from '../infra/replyClient.ts';
import type { Waiters } from '../infra/wake.ts';

/** What the runtimes commands need: the database, the clock, the held claims to wake, and whom to tell of a job given back. */
export interface RuntimesContext {
  orm: MikroORM;
  now: () => Date;
  ids: () => string;
  waiters: Waiters;
  /** Told when a finish gives a job back (released, or failed with attempts left): the fleet's wake-ups. */
  givenBack?: (accountId: string, runtimeId: string) => void;
  /** Carries out `handled` replies through the owning services; absent: no reply is carried out (501). */
  replies?: ReplyClient;
}
