import type { StoredEvent } from '@oan/eventstore';
import {
  decideRecall,
  decideSend,
  decideUpload,
  type SendMessage,
  type UploadAttachment,
} from '../domain/conversation.ts';
import type { ConversationMessageSent } from '@oan/domain';
import { loadAttachments, loadMessage } from '../infra/store.ts';
import { ensureConversation, runConversationCommand, type ConversationContext } from './context.ts';

/** §4.7 (28): the stored message, with its changeSequence. */
export async function sendMessage(
  ctx: ConversationContext,
  conversationId: string,
  input: Omit<SendMessage, 'messageId'>,
): Promise<ConversationMessageSent> {
  const messageId = ctx.ids();
  const appended = await runConversationCommand(
    ctx,
    conversationId,
    async (em, conv, now) => {
      const attachments = conv ? await loadAttachments(em, conv.id, input.attachmentIds ?? []) : [];
      return {
        accountId: input.accountId,
        events: decideSend(conv, { ...input, messageId }, attachments, now),
      };
    },
    { openFor: input.accountId },
  );
  return only(appended).data as ConversationMessageSent;
}

/** §4.7 (29): records a file already in object storage (the caller removes it if this throws). */
export async function recordUpload(
  ctx: ConversationContext,
  conversationId: string,
  input: UploadAttachment,
): Promise<void> {
  await runConversationCommand(ctx, conversationId, async (_em, conv, now) => ({
    accountId: input.accountId,
    events: decideUpload(conv, input, now),
  }));
}

/** Extension: the sender recalls its message; returns the storage keys of the files to delete. */
export async function recallMessage(
  ctx: ConversationContext,
  conversationId: string,
  accountId: string,
  messageId: string,
): Promise<string[]> {
  await ensureConversation(ctx, conversationId, accountId);
  let keys: string[] = [];
  await runConversationCommand(ctx, conversationId, async (em, conv, now) => {
    const message = conv ? await loadMessage(em, conv.id, messageId) : null;
    const events = decideRecall(conv, accountId, message, now);
    if (conv && message) {
      keys = (await loadAttachments(em, conv.id, message.attachmentIds)).map((a) => a.storageKey);
    }
    return { accountId, events };
  });
  return keys;
}

function only(appended: StoredEvent[]): StoredEvent {
  const [event] = appended;
  if (!event || appended.length !== 1) throw new Error('Expected exactly one appended event');
  return event;
}
