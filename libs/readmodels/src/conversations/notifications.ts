import type { ConversationEvent, MessageAttachment, SealedContent } from '@oan/domain';
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

/** An `oan-sealed-v1` envelope in its wire order, whatever order it was stored in. */
export const wireSealed = (s: SealedContent): SealedContent => ({
  alg: s.alg,
  ephemeralKey: s.ephemeralKey,
  nonce: s.nonce,
  ciphertext: s.ciphertext,
  recipients: s.recipients.map((r) => ({
    accountId: r.accountId,
    keyId: r.keyId,
    nonce: r.nonce,
    wrappedKey: r.wrappedKey,
  })),
});

/**
 * `relay_message`, only to the account that did not write the message; the sender gets no echo. A
 * sealed message's payload carries `sealed` instead of `content` (docs/sealed-messages.md); a plain
 * one's is what v1 always sent.
 */
export function relayMessage({ data: d }: Event<'ConversationMessageSent'>): NotificationSpec[] {
  const { conversationId, messageId, createdAt, attachments } = d;
  const recipient = d.recipientAccountId;
  if (recipient === d.senderAccountId) return [];
  const sealed = d.sealed ?? null;
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
        ...(sealed === null ? { content: d.content } : { sealed: wireSealed(sealed) }),
        createdAt,
        ...(attachments.length > 0 ? { attachments: attachments.map(wireAttachment) } : {}),
      },
      createdAt,
    },
  ];
}

/**
 * A side of the conversation published or retired a device key: the other side gets a
 * `system_notice` (kind `conversation_key_changed`, which v1 clients show or ignore as unknown).
 */
export const keyChanged = ({ data: d }: Event<'ConversationKeyChanged'>): NotificationSpec[] => [
  {
    recipient: d.recipientAccountId,
    type: 'system_notice',
    source: 'platform',
    payload: {
      kind: 'conversation_key_changed',
      conversationId: d.conversationId,
      accountId: d.accountId,
      keyId: d.keyId,
      fingerprint: d.fingerprint,
      change: d.change,
    },
    createdAt: d.changedAt,
  },
];
