import type { GoferEvent } from '@oan/domain';
import type { NotificationSpec, StoredEvent } from '../types.ts';

type Event<T extends GoferEvent['type']> = StoredEvent<Extract<GoferEvent, { type: T }>>;

/** The row kinds named in the envelope's payload (an added optional field v1 clients ignore). */
const PAYLOAD_KINDS: Partial<Record<string, string>> = {
  relay: 'relay_turn',
  a2a: 'a2a_turn',
  caller_question: 'caller_question',
};

/**
 * The gofers context's two notifications: an assistant turn becomes `gofer_message`, or
 * `gofer_question` when it waits for the owner; the owner's own messages never become events.
 */
export function chatNotifications(event: Event<'ChatMessageAdded'>): NotificationSpec[] {
  const d = event.data;
  const goferId = d.goferId;
  if (d.role !== 'assistant') return [];
  const pending = d.pendingQuery === true;
  const constraints = d.responseConstraints ?? null;
  return [
    {
      recipient: event.partitionKey,
      type: pending ? 'gofer_question' : 'gofer_message',
      source: 'own_gofer',
      goferId,
      chatId: d.chatId,
      reply: `/gofers/${goferId}/chat/messages`,
      // Only a pending query carries the frozen constraints shape.
      ...(pending && constraints
        ? { responseConstraints: JSON.parse(constraints) as Record<string, unknown> }
        : {}),
      // ADR 0026: a relay (or A2A, ADR 0035) turn quotes a stranger; `kind` tells the owner's
      // connector it is not the Gofer's own answer to them (the v1 `source` stays `own_gofer`).
      // ADR 0036: a question asked for a caller says so too (the owner's next message goes to that
      // caller).
      payload: {
        messageId: d.messageId,
        content: d.content,
        createdAt: d.createdAt,
        ...(PAYLOAD_KINDS[d.kind ?? ''] ? { kind: PAYLOAD_KINDS[d.kind ?? ''] } : {}),
      },
      createdAt: d.createdAt,
    },
  ];
}
