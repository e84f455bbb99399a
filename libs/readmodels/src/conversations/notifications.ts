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
 * The conversations context's notifications. `relay_message`, only to the account that did not
 * write the message; the sender gets no echo. A sealed message's payload carries `sealed` instead of
 * `content` (docs/sealed-messages.md); a plain one's is what v1 always sent. Revisions send their own
 * (`relayRevision`).
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

/** What the other side reads of a retraction, a v1 connector as plain text (ADR 0037). */
export const RETRACTED_TEXT = '[retracted] The other side withdrew a message.';
/** The prefix of a correction's text, so a v1 connector shows it as one. */
export const CORRECTION_PREFIX = '[correction] ';

/**
 * A revision reaches the other side as a `relay_message` of its own (docs/sealed-messages.md, ADR
 * 0037): a new `messageId` (the revision's id, so a client that drops repeated ids keeps it), the text
 * a v1 connector shows, and `revision` naming the message it revises. A sealed correction carries
 * `sealed` instead of `content`.
 */
export function relayRevision(
  event: Event<'ConversationMessageCorrected'> | Event<'ConversationMessageRetracted'>,
): NotificationSpec[] {
  const d = event.data;
  const recipient = d.recipientAccountId;
  if (recipient === d.senderAccountId) return [];
  const corrected = event.type === 'ConversationMessageCorrected';
  const createdAt = corrected ? event.data.correctedAt : event.data.retractedAt;
  const body = !corrected
    ? { content: RETRACTED_TEXT }
    : event.data.sealed === null
      ? { content: `${CORRECTION_PREFIX}${event.data.content}` }
      : { sealed: wireSealed(event.data.sealed) };
  return [
    {
      recipient,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId: d.conversationId,
      reply: `/conversations/${d.conversationId}/messages`,
      payload: {
        messageId: d.revisionId,
        ...body,
        createdAt,
        revision: {
          messageId: d.messageId,
          action: corrected ? 'correct' : 'retract',
          count: Number(d.count),
        },
      },
      createdAt,
    },
  ];
}

/**
 * The message a `relay_message` payload carries content of, and whether it is the retraction that
 * withdraws it: a message's own (`messageId`) or a correction's (`revision.messageId`). The projector
 * keeps the first, to scrub them when the second comes (services/projector/src/stages/scrub.ts).
 */
export function relayedMessageOf(
  payload: Record<string, unknown>,
): { messageId: string; retracts: boolean } | null {
  const revision = payload.revision as { messageId?: unknown; action?: unknown } | undefined;
  if (revision === undefined) {
    return typeof payload.messageId === 'string' ? { messageId: payload.messageId, retracts: false } : null;
  }
  if (typeof revision.messageId !== 'string') return null;
  return { messageId: revision.messageId, retracts: revision.action === 'retract' };
}

/**
 * A `relay_message` payload with the withdrawn message's content taken out: its text empty, no sealed
 * content and no attachments (deleted with it); its ids, time and `revision` stay.
 */
export function scrubbedRelayPayload(payload: Record<string, unknown>): Record<string, unknown> {
  const { messageId, createdAt, revision } = payload;
  return { messageId, content: '', createdAt, ...(revision === undefined ? {} : { revision }) };
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
