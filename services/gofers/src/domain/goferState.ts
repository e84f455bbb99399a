import type { AttachmentKind, ChatRole, DiscoveryStatus, GoferEvent, RagStatus } from '@oan/domain';

/** Stream `gofer-<goferId>`: one Gofer, its role-chat and its uploads. */
export interface GoferMessage {
  messageId: string;
  role: ChatRole;
  pendingQuery: boolean;
  createdAt: string;
}

export interface GoferAttachment {
  kind: AttachmentKind;
  name: string;
  mimeType: string;
  size: number;
  ragStatus: RagStatus;
  /** Kept so a deletion can remove the bytes; never exposed. */
  storageKey: string;
  /** The message that carries it: a photo goes with one message only. */
  usedBy: string | null;
}

export interface GoferProfile {
  name: string;
  description: string;
  values: string[];
  demands: string[];
}

export interface GoferData extends GoferProfile {
  goferId: string;
  accountId: string;
  chatId: string;
  locale: string;
  humanReviewTriggers: string[];
  discoveryStatus: DiscoveryStatus;
  sourcePlatform: string;
  createdAt: string;
  messages: readonly GoferMessage[];
  /** User message ids an assistant turn already replied to (the brain answers each once). */
  answered: ReadonlySet<string>;
  attachments: ReadonlyMap<string, GoferAttachment>;
  /** The ConnectOnion relay address while the Gofer is published there, else null. */
  relayAddress: string | null;
  /** Reachable as an A2A agent (ADR 0035). */
  a2aPublished: boolean;
}

export type ActiveGofer = { status: 'active' } & GoferData;
export type GoferState = { status: 'none' } | ActiveGofer | ({ status: 'deleted' } & GoferData);

export const initialGoferState = (): GoferState => ({ status: 'none' });

export function evolveGofer(state: GoferState, event: GoferEvent): GoferState {
  if (event.type === 'GoferCreated') {
    if (state.status !== 'none') return state;
    const d = event.data;
    return {
      status: 'active',
      goferId: d.goferId,
      accountId: d.accountId,
      chatId: d.chatId,
      locale: d.locale,
      name: d.name,
      description: d.description,
      values: [],
      demands: [],
      humanReviewTriggers: d.humanReviewTriggers,
      discoveryStatus: 'in_discovery',
      sourcePlatform: d.sourcePlatform,
      createdAt: d.createdAt,
      messages: [],
      answered: new Set(),
      attachments: new Map(),
      relayAddress: null,
      a2aPublished: false,
    };
  }
  if (state.status === 'none') return state;
  switch (event.type) {
    case 'ChatMessageAdded': {
      const d = event.data;
      const message = {
        messageId: d.messageId,
        role: d.role,
        pendingQuery: d.pendingQuery,
        createdAt: d.createdAt,
      };
      const answered = d.replyTo === null ? state.answered : new Set([...state.answered, d.replyTo]);
      let attachments = state.attachments;
      if (d.attachmentIds.length > 0) {
        const next = new Map(attachments);
        for (const id of d.attachmentIds) {
          const a = next.get(id);
          if (a && a.usedBy === null) next.set(id, { ...a, usedBy: d.messageId });
        }
        attachments = next;
      }
      return { ...state, messages: [...state.messages, message], answered, attachments };
    }
    case 'GoferProfileUpdated': {
      const { name, description, values, demands } = event.data;
      return { ...state, name, description, values, demands };
    }
    case 'GoferDiscoveryStatusChanged':
      return { ...state, discoveryStatus: event.data.status };
    case 'GoferDeleted':
      // A deleted Gofer is off the relay and off A2A too (the delete command withdraws both).
      return { ...state, status: 'deleted', relayAddress: null, a2aPublished: false };
    case 'GoferRelayPublished':
      return { ...state, relayAddress: event.data.address };
    case 'GoferRelayUnpublished':
      return { ...state, relayAddress: null };
    case 'GoferA2APublished':
      return { ...state, a2aPublished: true };
    case 'GoferA2AUnpublished':
      return { ...state, a2aPublished: false };
    case 'AttachmentAdded': {
      const d = event.data;
      const attachments = new Map(state.attachments);
      attachments.set(d.attachmentId, {
        kind: d.kind,
        name: d.name,
        mimeType: d.mimeType,
        size: d.size,
        ragStatus: d.ragStatus,
        storageKey: d.storageKey,
        usedBy: null,
      });
      return { ...state, attachments };
    }
    case 'AttachmentRagStatusChanged': {
      const current = state.attachments.get(event.data.attachmentId);
      if (!current) return state;
      const attachments = new Map(state.attachments);
      attachments.set(event.data.attachmentId, { ...current, ragStatus: event.data.ragStatus });
      return { ...state, attachments };
    }
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}
