import { sql } from '@oan/db';
import { threadIdsOfGofer } from '@oan/readmodels';
import type { GoferEvent } from '@oan/domain';
import {
  reactorMember,
  startReactorGroup,
  type ReactorMember,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import { closeEach, type MatchingContext } from '../commands/context.ts';

export interface GoferDeletedDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: MatchingContext;
  logger: LogSink;
  topicPrefix: string;
}

/**
 * Closes every thread of a deleted Gofer with reason `gofer_deleted` (`DELETE /gofers/:goferId`
 * stops every further event for it): its counterpart's thread reads as closed and no session, card
 * or request follows. The threads come from the write side's `gofer_threads` (written with each
 * `ThreadProposed`, never behind the streams) and the thread read model (the projected list); an
 * already closed thread appends nothing.
 */
export async function closeThreadsOf(ctx: MatchingContext, goferId: string): Promise<string[]> {
  const em = ctx.orm.em.fork();
  const own = await sql<{ thread_id: string }>(
    em,
    'select thread_id from matching.gofer_threads where gofer_id = ?',
    [goferId],
  );
  const threadIds = new Set([...own.map((r) => r.thread_id), ...(await threadIdsOfGofer(em, goferId))]);
  return closeEach(ctx, threadIds, { type: 'CloseForDeletedGofer', data: { goferId } });
}

/** Group `<prefix>matching.gofer-deleted` on `<prefix>gofers.events`. */
export function goferDeletedReactor(deps: GoferDeletedDeps): ReactorMember {
  return reactorMember<GoferEvent>({
    group: `${deps.topicPrefix}matching.gofer-deleted`,
    topic: `${deps.topicPrefix}gofers.events`,
    on: {
      GoferDeleted: async ({ data }) => {
        const closed = await closeThreadsOf(deps.ctx, data.goferId);
        if (closed.length > 0)
          deps.logger.info({ closed: closed.length }, 'closed the threads of a deleted Gofer');
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startGoferDeleted = (deps: GoferDeletedDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [goferDeletedReactor(deps)] });
