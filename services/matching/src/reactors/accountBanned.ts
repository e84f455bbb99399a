import { sql } from '@oan/db';
import type { AuthEvent } from '@oan/domain';
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

export interface AccountBannedDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: MatchingContext;
  logger: LogSink;
  topicPrefix: string;
}

/**
 * Closes every thread of a banned account's Gofers with reason `account_banned`: the counterpart's
 * thread reads as closed, as after a rejection, and no session turn, card or match request follows.
 * The threads come from the write side's `gofer_threads` (written with each `ThreadProposed`, never
 * behind the streams); an already closed thread appends nothing.
 */
export async function closeThreadsOfAccount(ctx: MatchingContext, accountId: string): Promise<string[]> {
  const rows = await sql<{ thread_id: string }>(
    ctx.orm.em.fork(),
    'select thread_id from matching.gofer_threads where account_id = ? order by thread_id',
    [accountId],
  );
  return closeEach(
    ctx,
    rows.map((r) => r.thread_id),
    { type: 'CloseForBannedAccount', data: { accountId } },
  );
}

/** Group `<prefix>matching.account-banned` on `<prefix>auth.events`. */
export function accountBannedReactor(deps: AccountBannedDeps): ReactorMember {
  return reactorMember<AuthEvent>({
    group: `${deps.topicPrefix}matching.account-banned`,
    topic: `${deps.topicPrefix}auth.events`,
    on: {
      AccountBanned: async ({ data }) => {
        const closed = await closeThreadsOfAccount(deps.ctx, data.accountId);
        if (closed.length > 0)
          deps.logger.info({ closed: closed.length }, 'closed the threads of a banned account');
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startAccountBanned = (deps: AccountBannedDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [accountBannedReactor(deps)] });
