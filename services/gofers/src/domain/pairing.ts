import { v5 as uuidv5 } from 'uuid';
import type { GoferEvent } from '@oan/domain';
import type { GoferState } from './goferState.ts';
import { localeFamily, pairingAnnouncement } from './goferTexts.ts';

/** Fixed: changing it would change every announcement's id on replay. */
const PAIRING_NAMESPACE = '8f1c2b7e-5d4a-4e0b-9a61-3c7d2e9f1b58';

/** One announcement per thread and Gofer: a redelivered proposal appends nothing. */
export const pairingMessageIdFor = (threadId: string, goferId: string) =>
  uuidv5(`pairing:${threadId}:${goferId}`, PAIRING_NAMESPACE);

export interface PairingRef {
  roleId: string;
  name: string;
}

export interface AnnouncePairing {
  threadId: string;
  self: PairingRef;
  counterpart: PairingRef;
}

/**
 * The `system` row announcing a pairing in the Gofer's role-chat history: `kind: 'pairing'` and
 * the `pairing` object, written once per (thread, Gofer). Deleted or unknown Gofers get nothing
 * (a deleted Gofer produces no more events). The counterpart's name is quoted, never followed.
 */
export function announcePairing(state: GoferState, d: AnnouncePairing, now: string): GoferEvent[] {
  if (state.status !== 'active') return [];
  const messageId = pairingMessageIdFor(d.threadId, state.goferId);
  if (state.messages.some((m) => m.messageId === messageId)) return [];
  const name = d.counterpart.name.replace(/\s+/g, ' ').trim().slice(0, 80);
  return [
    {
      type: 'ChatMessageAdded',
      data: {
        goferId: state.goferId,
        accountId: state.accountId,
        chatId: state.chatId,
        messageId,
        role: 'system',
        content: pairingAnnouncement[localeFamily(state.locale)](name),
        attachmentIds: [],
        kind: 'pairing',
        pairing: JSON.stringify({ threadId: d.threadId, self: d.self, counterpart: d.counterpart }),
        pendingQuery: false,
        responseConstraints: null,
        replyTo: null,
        createdAt: now,
      },
    },
  ];
}
