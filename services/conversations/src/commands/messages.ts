import type { StoredEvent } from '@oan/eventstore';
import type { SendMessage, UploadAttachment } from '../domain/conversation.ts';
import type { ConversationMessageSent } from '@oan/domain';
import { currentKeysOf } from '../infra/deviceKeys.ts';
import { loadAttachments, messageByClientId } from '../infra/store.ts';
import { runConversationCommand, type ConversationContext } from './context.ts';

/**
 * Sending a message: the stored message, with its changeSequence; for a send that repeats an
 * earlier one under its `clientMessageId`, that earlier message.
 */
export async function sendMessage(
  ctx: ConversationContext,
  conversationId: string,
  input: Omit<SendMessage, 'messageId' | 'attachments' | 'keys' | 'previous'>,
  /** An internal caller's command id: the message is sent once however often it is sent. */
  commandId?: string,
): Promise<ConversationMessageSent> {
  const messageId = ctx.ids();
  const found: { previous: ConversationMessageSent | null } = { previous: null };
  const { appended } = await runConversationCommand(
    ctx,
    conversationId,
    async (em, state) => {
      // What the decision needs, read under the conversation's lock (only an open conversation's):
      // the files it names as the index has them, the message its clientMessageId made before, and
      // for a sealed message both sides' current keys.
      const open = state.status === 'open' ? state : null;
      const attachments = open ? await loadAttachments(em, open.id, input.attachmentIds ?? []) : [];
      const previous =
        open && input.clientMessageId !== undefined
          ? await messageByClientId(em, ctx.store, open.id, input.accountId, input.clientMessageId)
          : null;
      found.previous = previous;
      const keys =
        open && input.sealed !== undefined && previous === null
          ? await currentKeysOf(em, [open.accountA, open.accountB])
          : [];
      return { type: 'SendMessage', data: { ...input, messageId, attachments, keys, previous } };
    },
    { openFor: input.accountId, commandId },
  );
  if (appended.length === 0 && found.previous) return found.previous;
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
