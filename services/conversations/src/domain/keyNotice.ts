import type { ConversationEvent, ConversationKeyChanged } from '@oan/domain';
import type { ConversationState } from './conversationState.ts';

/** What the key-notice reactor tells one conversation (src/reactors/keyNotices.ts). */
export type NoticeKeyChange = Omit<ConversationKeyChanged, 'conversationId' | 'recipientAccountId'>;

/**
 * A side of the conversation published or retired a device key: the other side is told, while the
 * conversation is open. A conversation the account is not in, or with itself, tells no one.
 */
export function decideKeyNotice(state: ConversationState, input: NoticeKeyChange): ConversationEvent[] {
  if (state.status !== 'open') return [];
  const { accountA, accountB } = state;
  if (accountA !== input.accountId && accountB !== input.accountId) return [];
  const recipientAccountId = accountA === input.accountId ? accountB : accountA;
  if (recipientAccountId === input.accountId) return [];
  return [
    { type: 'ConversationKeyChanged', data: { conversationId: state.id, recipientAccountId, ...input } },
  ];
}
