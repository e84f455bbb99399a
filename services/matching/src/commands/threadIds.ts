import { sql } from '@oan/db';
import { keyedUuid, type StoredEvent } from '@oan/eventstore';
import { orderPair } from '../domain/ids.ts';
import type { ProposePairing } from '../domain/thread.ts';
import { runThreadCommand, type MatchingContext } from './context.ts';

/**
 * The id of a new pair's thread: deterministic, so a racing or redelivered proposal of the pair
 * lands on the one stream, and keyed by ID_SECRET, so two goferIds do not tell an outsider the id of
 * their thread (nor, through the threads group's 403-or-404, whether they were paired).
 */
export const threadIdFor = (secret: string, goferId1: string, goferId2: string) =>
  keyedUuid(secret, 'oan/thread-id/v1', orderPair(goferId1, goferId2).join(':'));

/**
 * The thread the two Gofers already share, whatever derived its id (threads proposed before ids were
 * keyed carry a UUIDv5 of the pair). `gofer_threads` is written in the proposal's own transaction,
 * so it never lags behind the streams.
 */
export async function sharedThreadId(
  ctx: Pick<MatchingContext, 'orm' | 'store'>,
  goferId1: string,
  goferId2: string,
): Promise<string | null> {
  const [row] = await sql<{ thread_id: string }>(
    ctx.orm.em.fork(),
    `select x.thread_id from "${ctx.store.schema}".gofer_threads x
       join "${ctx.store.schema}".gofer_threads y on y.thread_id = x.thread_id
      where x.gofer_id = ? and y.gofer_id = ?
      order by x.thread_id limit 1`,
    [goferId1, goferId2],
  );
  return row?.thread_id ?? null;
}

/**
 * Proposes the pair on its thread: the one the two Gofers already share, else a new one under the
 * keyed id. A pair already proposed appends nothing. `accountIds` are the callers whose reads wait.
 */
export async function proposePairing(
  ctx: MatchingContext,
  data: Omit<ProposePairing, 'threadId'>,
  accountIds: readonly string[] = [],
): Promise<{ threadId: string; appended: StoredEvent[] }> {
  const [x, y] = data.sides;
  const threadId =
    (await sharedThreadId(ctx, x.goferId, y.goferId)) ?? threadIdFor(ctx.idSecret, x.goferId, y.goferId);
  const { appended } = await runThreadCommand(
    ctx,
    threadId,
    { type: 'ProposePairing', data: { ...data, threadId } },
    accountIds,
  );
  return { threadId, appended };
}
