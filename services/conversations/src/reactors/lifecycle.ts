import {
  startReactorLoop,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import type { ObjectStorage } from '@oan/storage';
import { closeConversationsOf } from '../commands/close.ts';
import { deletedGoferOf, openConversation, type ConversationContext } from '../commands/context.ts';

export interface ReactorDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: ConversationContext;
  logger: LogSink;
  topicPrefix: string;
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * Group `<prefix>conversations.opener` on `<prefix>matching.events`: every accepted match request
 * opens its conversation (§4.6 (26): "creates … its conversation"). Redelivery opens nothing twice
 * (the stream can start once). A route that meets the conversation first opens it the same way.
 */
export async function startOpener(deps: ReactorDeps): Promise<RunningReactor> {
  return startReactorLoop({
    kafka: deps.kafka,
    registry: deps.registry,
    logger: deps.logger,
    groupId: `${deps.topicPrefix}conversations.opener`,
    topic: `${deps.topicPrefix}matching.events`,
    types: new Set(['MatchRequestDecided']),
    handle: async (record) => {
      const d = record.data;
      if (d.status !== 'accepted' || !d.conversationId || !d.matchId) return;
      const opened = {
        conversationId: text(d.conversationId),
        matchId: text(d.matchId),
        threadId: text(d.threadId),
        accountA: text(d.requesterAccountId),
        goferA: text(d.requesterGoferId),
        accountB: text(d.recipientAccountId),
        goferB: text(d.recipientGoferId),
        openedAt: text(d.decidedAt),
      };
      const deleted = await deletedGoferOf(deps.ctx.orm.em.fork(), opened);
      if (await openConversation(deps.ctx, opened, deleted)) {
        deps.logger.info({ conversationId: opened.conversationId }, 'opened a conversation');
      }
    },
  });
}

/**
 * Group `<prefix>conversations.gofer-deleted` on `<prefix>gofers.events`: a deleted Gofer's
 * conversations close (§4.4 (15)) and their files are deleted, best effort (a storage failure is
 * logged, never retried: the files are unreachable already).
 */
export async function startGoferDeleted(
  deps: ReactorDeps & { storage: ObjectStorage | null },
): Promise<RunningReactor> {
  return startReactorLoop({
    kafka: deps.kafka,
    registry: deps.registry,
    logger: deps.logger,
    groupId: `${deps.topicPrefix}conversations.gofer-deleted`,
    topic: `${deps.topicPrefix}gofers.events`,
    types: new Set(['GoferDeleted']),
    handle: async (record) => {
      const goferId = text(record.data.goferId);
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
  });
}
