import type { ConversationEvent, MessageAttachment } from '@oan/domain';
import type { NotificationSpec, StoredEvent } from '../types.ts';

type Event<T extends ConversationEvent['type']> = StoredEvent<Extract<ConversationEvent, { type: T }>>;

/** A nullable number as stored (an Avro long may decode as a bigint). */
export const numOrNull = (v: number | bigint | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

/** `OanConversationAttachment`: exactly these keys; width/height only when known. */
function wireAttachment(a: MessageAttachment): Record<string, unknown> {
  const width = numOrNull(a.width);
  const height = numOrNull(a.height);
  return {
    attachmentId: a.attachmentId,
    kind: a.kind,
    name: a.name,
    mimeType: a.mimeType,
    size: Number(a.size),
    ...(width === null ? {} : { width }),
    ...(height === null ? {} : { height }),
  };
}

/**
 * The conversations context's one notification: `relay_message`, only to the account that did
 * not write the message; the sender gets no echo.
 */
export function relayMessage({ data: d }: Event<'ConversationMessageSent'>): NotificationSpec[] {
  const { conversationId, messageId, createdAt, attachments } = d;
  const recipient = d.recipientAccountId;
  if (recipient === d.senderAccountId) return [];
  return [
    {
      recipient,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId,
      reply: `/conversations/${conversationId}/messages`,
      // `attachments` omitted entirely (never `[]`) when the message has none.
      payload: {
        messageId,
        content: d.content,
        createdAt,
        ...(attachments.length > 0 ? { attachments: attachments.map(wireAttachment) } : {}),
      },
      createdAt,
    },
  ];
}
