import type { DeviceKeyEvent } from '@oan/domain';
import { reactorMember, startReactorGroup, type ReactorMember, type RunningReactor } from '@oan/kafka';
import { runConversationCommand } from '../commands/context.ts';
import { openConversationsOfAccount } from '../infra/deviceKeys.ts';
import type { ReactorDeps } from './lifecycle.ts';

/**
 * Group `<prefix>conversations.key-notices` on `<prefix>conversations.events`: each key published or
 * retired is told to the other side of each open conversation of its account, as a
 * `ConversationKeyChanged` on that conversation's stream (the projector turns it into a
 * `system_notice`). One command per conversation under an id made of the key change and the
 * conversation, so a redelivery, or a crash halfway through the list, tells no one twice.
 */
export function keyNoticesReactor(deps: ReactorDeps): ReactorMember {
  const notice = async (
    accountId: string,
    data: { keyId: string; fingerprint: string; change: 'published' | 'retired'; changedAt: string },
  ) => {
    let told = 0;
    for (const id of await openConversationsOfAccount(deps.ctx.orm.em.fork(), accountId)) {
      const commandId = `key-notice/${accountId}/${data.keyId}/${data.change}/${id}`;
      const { appended } = await runConversationCommand(
        deps.ctx,
        id,
        () => ({ type: 'NoticeKeyChange', data: { accountId, ...data } }),
        { commandId },
      );
      told += appended.length;
    }
    if (told > 0) deps.logger.info({ told, change: data.change }, 'told of a key change');
  };
  return reactorMember<DeviceKeyEvent>({
    group: `${deps.topicPrefix}conversations.key-notices`,
    topic: `${deps.topicPrefix}conversations.events`,
    on: {
      DeviceKeyPublished: async ({ data: d }) =>
        notice(d.accountId, {
          keyId: d.keyId,
          fingerprint: d.fingerprint,
          change: 'published',
          changedAt: d.publishedAt,
        }),
      DeviceKeyRetired: async ({ data: d }) =>
        notice(d.accountId, {
          keyId: d.keyId,
          fingerprint: d.fingerprint,
          change: 'retired',
          changedAt: d.retiredAt,
        }),
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startKeyNotices = (deps: ReactorDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [keyNoticesReactor(deps)] });
