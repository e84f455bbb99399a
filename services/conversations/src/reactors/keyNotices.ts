import type { DeviceKeyEvent } from '@oan/domain';
import { reactorMember, startReactorGroup, type ReactorMember, type RunningReactor } from '@oan/kafka';
import { runConversationCommand } from '../commands/context.ts';
import { keyChangesSince, openConversationsOfAccount, type KeyChange } from '../infra/deviceKeys.ts';
import type { ReactorDeps } from './deps.ts';

/**
 * Tells the other side of conversation `conversationId` of one key change of `accountId`, as a
 * `ConversationKeyChanged` on that conversation's stream (the projector turns it into a
 * `system_notice`). The command's id is made of the key change and the conversation, so a
 * redelivery, a crash halfway through, or the opener telling the same change (below) tells no one
 * twice. Returns the events appended (none: told before, or the conversation is not open).
 */
async function tellKeyChange(
  deps: ReactorDeps,
  conversationId: string,
  accountId: string,
  data: KeyChange,
): Promise<number> {
  const commandId = `key-notice/${accountId}/${data.keyId}/${data.change}/${conversationId}`;
  const { appended } = await runConversationCommand(
    deps.ctx,
    conversationId,
    () => ({ type: 'NoticeKeyChange', data: { accountId, ...data } }),
    { commandId },
  );
  return appended.length;
}

/**
 * How far before a match's decision the opener looks for key changes: the decision's time is the
 * matching process's clock and a key's the conversations process's, which may differ a little. A
 * change told that was made just before the decision is a notice more, never a notice lost.
 */
export const KEY_CHANGES_BEFORE_DECISION_MS = 2000;

/**
 * The opener's part (src/reactors/lifecycle.ts): the key changes either side made since the match was
 * decided, told to the other side. Connectors learn of the conversation from `match_decided`, before
 * it opens here; a key changed in between found no open conversation when its reactor ran (the two
 * read different topics, in no order to each other).
 */
export async function tellKeyChangesSinceDecision(
  deps: ReactorDeps,
  conversation: { conversationId: string; accountA: string; accountB: string },
  decidedAt: string,
): Promise<number> {
  const since = new Date(Date.parse(decidedAt) - KEY_CHANGES_BEFORE_DECISION_MS).toISOString();
  const accounts = [conversation.accountA, conversation.accountB];
  let told = 0;
  for (const { accountId, ...change } of await keyChangesSince(deps.ctx.orm.em.fork(), accounts, since)) {
    told += await tellKeyChange(deps, conversation.conversationId, accountId, change);
  }
  return told;
}

/**
 * Group `<prefix>conversations.key-notices` on `<prefix>conversations.events`: each key published or
 * retired is told to the other side of each open conversation of its account.
 */
export function keyNoticesReactor(deps: ReactorDeps): ReactorMember {
  const notice = async (accountId: string, data: KeyChange) => {
    let told = 0;
    for (const id of await openConversationsOfAccount(deps.ctx.orm.em.fork(), accountId)) {
      told += await tellKeyChange(deps, id, accountId, data);
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
