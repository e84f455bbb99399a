import type { GoferEvent, ThreadEvent } from '@oan/domain';
import { reactorMember, startReactorGroup, type ReactorMember, type RunningReactor } from '@oan/kafka';
import type { ObjectStorage } from '@oan/storage';
import { closeConversationsOf } from '../commands/close.ts';
import { deletedGoferOf, openConversation } from '../commands/context.ts';
import type { ReactorDeps } from './deps.ts';
import { tellKeyChangesSinceDecision } from './keyNotices.ts';

/**
 * Group `<prefix>conversations.opener` on `<prefix>matching.events`: every accepted match request
 * opens its conversation (deciding to accept creates it). Redelivery opens nothing twice
 * (the stream can start once). A route that meets the conversation first opens it the same way.
 * Then each side is told of the other's key changes since the decision (src/reactors/keyNotices.ts).
 */
export function openerReactor(deps: ReactorDeps): ReactorMember {
  return reactorMember<ThreadEvent>({
    group: `${deps.topicPrefix}conversations.opener`,
    topic: `${deps.topicPrefix}matching.events`,
    on: {
      MatchRequestDecided: async ({ data: d }) => {
        if (d.status !== 'accepted' || !d.conversationId || !d.matchId) return;
        const opened = {
          conversationId: d.conversationId,
          matchId: d.matchId,
          threadId: d.threadId,
          accountA: d.requesterAccountId,
          goferA: d.requesterGoferId,
          accountB: d.recipientAccountId,
          goferB: d.recipientGoferId,
          openedAt: d.decidedAt,
        };
        const deleted = await deletedGoferOf(deps.ctx.orm.em.fork(), opened);
        if (await openConversation(deps.ctx, opened, deleted)) {
          deps.logger.info({ conversationId: opened.conversationId }, 'opened a conversation');
        }
        // Also when it was open already (a route opened it, or this is a redelivery after a crash).
        const told = await tellKeyChangesSinceDecision(deps, opened, d.decidedAt);
        if (told > 0) deps.logger.info({ told }, 'told of key changes made since the decision');
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startOpener = (deps: ReactorDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [openerReactor(deps)] });

/**
 * Group `<prefix>conversations.gofer-deleted` on `<prefix>gofers.events`: a deleted Gofer's
 * conversations close and their files are deleted, best effort (a storage failure is
 * logged, never retried: the files are unreachable already).
 */
export function goferDeletedReactor(deps: ReactorDeps & { storage: ObjectStorage | null }): ReactorMember {
  return reactorMember<GoferEvent>({
    group: `${deps.topicPrefix}conversations.gofer-deleted`,
    topic: `${deps.topicPrefix}gofers.events`,
    on: {
      GoferDeleted: async ({ data }) => {
        const goferId = data.goferId;
        const { closed, storageKeys } = await closeConversationsOf(deps.ctx, goferId);
        for (const key of storageKeys) {
          await deps.storage
            ?.delete(key)
            .catch((err: unknown) =>
              deps.logger.warn({ err: (err as Error).message }, 'could not delete a file'),
            );
        }
        if (closed > 0) deps.logger.info({ closed }, 'closed the conversations of a deleted Gofer');
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startGoferDeleted = (
  deps: ReactorDeps & { storage: ObjectStorage | null },
): Promise<RunningReactor> => startReactorGroup({ ...deps, members: [goferDeletedReactor(deps)] });
