import type { StoredEvent } from '@oan/eventstore';
import type { SendMessage, UploadAttachment } from '../domain/conversation.ts';
import type { ConversationMessageSent } from '@oan/domain';
import { loadAttachments } from '../infra/store.ts';
import { runConversationCommand, type ConversationContext } from './context.ts';

/** Sending a message: the stored message, with its changeSequence. */
export async function sendMessage(
  ctx: ConversationContext,
  conversationId: string,
  input: Omit<SendMessage, 'messageId' | 'attachments'>,
  /** An internal caller's command id: the message is sent once however often it is sent. */
  commandId?: string,
): Promise<ConversationMessageSent> {
  const messageId = ctx.ids();
  const { appended } = await runConversationCommand(
    ctx,
    conversationId,
    async (em, state) => {
      // The files it names, as the index has them (only an open conversation's are looked up).
      const attachments =
        state.status === 'open' ? await loadAttachments(em, state.id, input.attachmentIds ?? []) : [];
      return { type: 'SendMessage', data: { ...input, messageId, attachments } };
    },
    { openFor: input.accountId, commandId },
  );
  return only(appended).data as ConversationMessageSent;
}

/** Uploading an attachment: records a file already in object storage (the caller removes it on a throw). */
export async function recordUpload(
  ctx: ConversationContext,
  conversationId: string,
  input: UploadAttachment,
): Promise<void> {
  await runConversationCommand(ctx, conversationId, () => ({ type: 'UploadAttachment', data: input }));
}

function only(appended: StoredEvent[]): StoredEvent {
  const [event] = appended;
  if (!event || appended.length !== 1) throw new Error('Expected exactly one appended event');
  return event;
}
