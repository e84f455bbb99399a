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

/**
 * A caller's question for the owner (ADR 0036), open until its answer was handed on: `asked` once
 * its role-chat row is written (one at a time; the others wait their turn in ask order), `answer`
 * once the owner's next message after that row answered it.
 */
export interface CallerQuestion {
  messageId: string;
  channel: string;
  caller: string;
  taskId: string;
  content: string;
  asked: boolean;
  answer: { messageId: string; content: string; createdAt: string } | null;
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
  /**
   * User message ids that got their reply: an assistant turn answered them (the brain answers each
   * once), or they were the owner's answer to a caller's question (the caller gets it, not the brain).
   */
  answered: ReadonlySet<string>;
  /** Open caller questions, oldest first (ADR 0036). */
  callerQuestions: readonly CallerQuestion[];
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
      callerQuestions: [],
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
      let answered = d.replyTo === null ? state.answered : new Set([...state.answered, d.replyTo]);
      const callerQuestions = evolveCallerQuestions(state.callerQuestions, event.data);
      // The owner's first message after a caller question's row is the answer to it (a new list).
      if (d.role === 'user' && callerQuestions !== state.callerQuestions) {
        answered = new Set([...answered, d.messageId]);
      }
      let attachments = state.attachments;
      if (d.attachmentIds.length > 0) {
        const next = new Map(attachments);
        for (const id of d.attachmentIds) {
          const a = next.get(id);
          if (a && a.usedBy === null) next.set(id, { ...a, usedBy: d.messageId });
        }
        attachments = next;
      }
      return { ...state, messages: [...state.messages, message], answered, attachments, callerQuestions };
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
    case 'CallerQuestionAsked': {
      const { messageId, channel, caller, taskId, content } = event.data;
      const question = { messageId, channel, caller, taskId, content, asked: false, answer: null };
      return { ...state, callerQuestions: [...state.callerQuestions, question] };
    }
    case 'CallerQuestionAnswered':
    case 'CallerQuestionWithdrawn': {
      const id = event.data.questionMessageId;
      return { ...state, callerQuestions: state.callerQuestions.filter((q) => q.messageId !== id) };
    }
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}

/**
 * A role-chat row marks its caller question asked; the owner's next message answers the asked one.
 * Returns the same list when nothing changed.
 */
function evolveCallerQuestions(
  questions: readonly CallerQuestion[],
  d: Extract<GoferEvent, { type: 'ChatMessageAdded' }>['data'],
): readonly CallerQuestion[] {
  if (questions.length === 0) return questions;
  if (d.role === 'assistant') {
    return questions.map((q) => (q.messageId === d.messageId ? { ...q, asked: true } : q));
  }
  if (d.role !== 'user') return questions;
  const at = questions.findIndex((q) => q.asked && q.answer === null);
  if (at < 0) return questions;
  const answer = { messageId: d.messageId, content: d.content, createdAt: d.createdAt };
  return questions.map((q, i) => (i === at ? { ...q, answer } : q));
}
