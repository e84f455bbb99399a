import type { GoferEvent } from '@oan/domain';
import type { NotificationSpec, StoredEvent } from '../types.ts';

type Event<T extends GoferEvent['type']> = StoredEvent<Extract<GoferEvent, { type: T }>>;

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
      recipient: event.accountId,
      type: pending ? 'gofer_question' : 'gofer_message',
      source: 'own_gofer',
      goferId,
      chatId: d.chatId,
      reply: `/gofers/${goferId}/chat/messages`,
      // Only a pending query carries the frozen constraints shape.
      ...(pending && constraints
        ? { responseConstraints: JSON.parse(constraints) as Record<string, unknown> }
        : {}),
      // ADR 0026: a relay (or A2A, ADR 0035) turn quotes a stranger; `kind` tells the owner's connector it is not the
      // Gofer's own answer to them (the v1 `source` stays `own_gofer`).
      payload: {
        messageId: d.messageId,
        content: d.content,
        createdAt: d.createdAt,
        ...(d.kind === 'relay' ? { kind: 'relay_turn' } : {}),
        ...(d.kind === 'a2a' ? { kind: 'a2a_turn' } : {}),
      },
      createdAt: d.createdAt,
    },
  ];
}
