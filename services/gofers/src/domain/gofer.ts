import { ForbiddenError, NotFoundError, RejectedError } from './errors.ts';
import type {
  AttachmentKind,
  ChatMessageAdded,
  ChatRole,
  DiscoveryStatus,
  GoferEvent,
  RagStatus,
  Timed,
} from '@oan/domain';

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
  /** Kept so a deletion can remove the bytes (§4.4 (15)); never exposed. */
  storageKey: string;
  /** The message that carries it; §4.4 (13): a photo goes with one message only. */
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
  /** The ConnectOnion relay address while the Gofer is published there (issue 16), else null. */
  relayAddress: string | null;
}

export type ActiveGofer = { status: 'active' } & GoferData;
export type GoferState = { status: 'none' } | ActiveGofer | ({ status: 'deleted' } & GoferData);

export type GoferCommand =
  | {
      type: 'CreateGofer';
      data: {
        goferId: string;
        accountId: string;
        chatId: string;
        greetingId: string;
        locale: string;
        humanReviewTriggers: string[];
        sourcePlatform: string;
      };
    }
  | {
      type: 'PostUserMessage';
      data: {
        accountId: string;
        messageId: string;
        content: string;
        attachmentIds: string[];
        /** §0.5: without an object-storage adapter any attachment id is refused. */
        attachmentsEnabled: boolean;
      };
    }
  | { type: 'DeleteGofer'; data: { accountId: string } }
  /** Issue 16: `address` is the Gofer's own relay key's (kept in the gofers schema, never here). */
  | { type: 'PublishOnRelay'; data: { accountId: string; address: string } }
  | { type: 'UnpublishFromRelay'; data: { accountId: string } }
  | {
      type: 'AddRelayTurn';
      data: {
        messageId: string;
        /** The caller's relay address (the CONNECT's verified `from`). */
        caller: string;
        /** The caller's words (untrusted counterpart content) and the Gofer's answer. */
        asked: string;
        answered: string;
      };
    }
  | {
      type: 'AddAssistantTurn';
      data: {
        messageId: string;
        replyTo: string | null;
        content: string;
        pendingQuery: boolean;
        /** JSON text of the frozen §8.3 shape. */
        responseConstraints: string | null;
        profile: GoferProfile | null;
        discoveryStatus: DiscoveryStatus | null;
      };
    };

// ---- Locale-dependent texts (§4.4 (11)): `en` and `zh`, anything else falls back to `en`. ----

const TEXTS = {
  en: {
    name: 'New Gofer',
    description: 'A new Gofer, still learning what its owner is looking for.',
    greeting:
      "Hi, I'm your new Gofer! Tell me what you would like me to find or achieve for you, and I'll ask a few questions to get to know you.",
    relayTurn: (caller: string, asked: string, answered: string) =>
      `A caller on the agent relay (${caller}) asked:\n${asked}\n\nI answered:\n${answered}`,
  },
  zh: {
    name: '新的 Gofer',
    description: '一个新的 Gofer，正在了解主人想要寻找什么。',
    greeting: '你好，我是你的新 Gofer！告诉我你希望我帮你寻找或实现什么，我会问几个问题来了解你。',
    relayTurn: (caller: string, asked: string, answered: string) =>
      `代理中继上的来访者（${caller}）问：\n${asked}\n\n我回答：\n${answered}`,
  },
} as const;
export type LocaleFamily = keyof typeof TEXTS;

/** `zh`, `zh-CN`, `zh_Hant` → zh; everything else (unset included) → en. */
export function localeFamily(locale: string | null | undefined): LocaleFamily {
  const primary = (locale ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return primary === 'zh' ? 'zh' : 'en';
}

/** The locale stored on the Gofer: as requested (BCP 47 separators), `en` when none was given. */
export const normalizeLocale = (locale: string | null | undefined): string =>
  (locale ?? '').trim().replace(/_/g, '-') || 'en';

export const placeholderTexts = (locale: string | null | undefined) => TEXTS[localeFamily(locale)];

// ---- State ----

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
      // A deleted Gofer is off the relay too (the delete command withdraws its announcement).
      return { ...state, status: 'deleted', relayAddress: null };
    case 'GoferRelayPublished':
      return { ...state, relayAddress: event.data.address };
    case 'GoferRelayUnpublished':
      return { ...state, relayAddress: null };
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

// ---- Guards and decisions ----

/**
 * §6: unknown, deleted and foreign Gofers are one refusal (byte-identical 403) on every
 * `/gofers/:goferId/*` route except DELETE.
 */
export function assertOwnedActive(state: GoferState, accountId: string): asserts state is ActiveGofer {
  if (state.status !== 'active' || state.accountId !== accountId) {
    throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  }
}

const rejected = (code: ConstructorParameters<typeof RejectedError>[0], message: string) =>
  new RejectedError(code, message);

const sameProfile = (a: GoferProfile, b: GoferProfile) =>
  a.name === b.name &&
  a.description === b.description &&
  JSON.stringify(a.values) === JSON.stringify(b.values) &&
  JSON.stringify(a.demands) === JSON.stringify(b.demands);

/** A role-chat message with the defaults of a plain turn: nothing attached, no pairing, not pending. */
const chatMessage = (
  ids: Pick<ChatMessageAdded, 'goferId' | 'accountId' | 'chatId'>,
  m: Pick<ChatMessageAdded, 'messageId' | 'role' | 'content' | 'createdAt'> & Partial<ChatMessageAdded>,
): GoferEvent => ({
  type: 'ChatMessageAdded',
  data: {
    ...ids,
    attachmentIds: [],
    kind: null,
    pairing: null,
    pendingQuery: false,
    responseConstraints: null,
    replyTo: null,
    ...m,
  },
});

export function decideGofer(command: Timed<GoferCommand>, state: GoferState): GoferEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'CreateGofer': {
      // Ids are fresh UUIDs: an existing stream is a bug, never a caller's mistake.
      if (state.status !== 'none') throw new Error('Gofer stream already exists');
      const { greetingId, ...d } = command.data;
      const texts = placeholderTexts(d.locale);
      const common = { goferId: d.goferId, accountId: d.accountId, chatId: d.chatId };
      // §4.4 (11): the greeting is stored with the Gofer, ahead of the goal the connector posts next.
      return [
        {
          type: 'GoferCreated',
          data: { ...d, name: texts.name, description: texts.description, createdAt: now },
        },
        chatMessage(common, {
          messageId: greetingId,
          role: 'assistant',
          content: texts.greeting,
          createdAt: now,
        }),
      ];
    }
    case 'PostUserMessage': {
      const d = command.data;
      assertOwnedActive(state, d.accountId);
      // §4.4 (13): every check before the 202; each failure is a 400.
      if (d.attachmentIds.length > 0 && !d.attachmentsEnabled) {
        throw rejected('ATTACHMENTS_UNAVAILABLE', 'Attachments are not available on this server');
      }
      if (d.attachmentIds.length > 1) throw rejected('TOO_MANY_ATTACHMENTS', 'At most one attachment');
      if (d.content.trim() === '' && d.attachmentIds.length === 0) {
        throw rejected('MESSAGE_EMPTY', 'Either content or attachmentIds is required');
      }
      for (const id of d.attachmentIds) {
        const a = state.attachments.get(id);
        if (!a) throw rejected('ATTACHMENT_UNKNOWN', 'Unknown attachment id');
        if (a.kind === 'photo' && a.usedBy !== null) {
          throw rejected('PHOTO_ALREADY_USED', 'This photo is already attached to an earlier message');
        }
      }
      const { goferId, accountId, chatId } = state;
      return [
        chatMessage(
          { goferId, accountId, chatId },
          {
            messageId: d.messageId,
            role: 'user',
            content: d.content,
            attachmentIds: d.attachmentIds,
            createdAt: now,
          },
        ),
      ];
    }
    case 'DeleteGofer': {
      // A4: unknown ⇒ 404, foreign ⇒ 403; a deleted Gofer is gone, for its owner too.
      if (state.status !== 'active') throw new NotFoundError('GOFER_NOT_FOUND', 'Gofer not found');
      if (state.accountId !== command.data.accountId)
        throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
      return [
        {
          type: 'GoferDeleted',
          data: { goferId: state.goferId, accountId: state.accountId, deletedAt: now },
        },
      ];
    }
    case 'PublishOnRelay': {
      const d = command.data;
      assertOwnedActive(state, d.accountId); // §6: the one 403 of every /gofers/:goferId/* route
      if (state.relayAddress === d.address) return []; // PUT is idempotent
      const ids = { goferId: state.goferId, accountId: state.accountId };
      return [{ type: 'GoferRelayPublished', data: { ...ids, address: d.address, publishedAt: now } }];
    }
    case 'UnpublishFromRelay': {
      assertOwnedActive(state, command.data.accountId);
      if (state.relayAddress === null) return []; // DELETE is idempotent
      const ids = { goferId: state.goferId, accountId: state.accountId };
      return [
        {
          type: 'GoferRelayUnpublished',
          data: { ...ids, address: state.relayAddress, unpublishedAt: now },
        },
      ];
    }
    case 'AddRelayTurn': {
      const d = command.data;
      // Unpublished or deleted meanwhile: nothing is recorded, and the caller gets no answer.
      if (state.status !== 'active' || state.relayAddress === null) return [];
      const texts = placeholderTexts(state.locale);
      // An assistant row (so the owner's connector gets it as a `gofer_message`) of kind 'relay':
      // the brain renders it as labelled counterpart content, never as its own words.
      return [
        chatMessage(
          { goferId: state.goferId, accountId: state.accountId, chatId: state.chatId },
          {
            messageId: d.messageId,
            role: 'assistant',
            kind: 'relay',
            content: texts.relayTurn(d.caller, d.asked, d.answered),
            createdAt: now,
          },
        ),
      ];
    }
    case 'AddAssistantTurn': {
      const d = command.data;
      // §8.6: nothing more for a deleted Gofer; one reply per user message (redelivery, retries).
      if (state.status !== 'active') return [];
      if (d.replyTo !== null && state.answered.has(d.replyTo)) return [];
      const ids = { goferId: state.goferId, accountId: state.accountId };
      const events: GoferEvent[] = [];
      // Before the message: whoever sees the reply sees the profile and status it announces.
      if (d.profile && !sameProfile(d.profile, state)) {
        events.push({ type: 'GoferProfileUpdated', data: { ...ids, ...d.profile, updatedAt: now } });
      }
      if (d.discoveryStatus && d.discoveryStatus !== state.discoveryStatus) {
        events.push({
          type: 'GoferDiscoveryStatusChanged',
          data: { ...ids, status: d.discoveryStatus, changedAt: now },
        });
      }
      events.push(
        chatMessage(
          { ...ids, chatId: state.chatId },
          {
            messageId: d.messageId,
            role: 'assistant',
            content: d.content,
            pendingQuery: d.pendingQuery,
            responseConstraints: d.pendingQuery ? d.responseConstraints : null,
            replyTo: d.replyTo,
            createdAt: now,
          },
        ),
      );
      return events;
    }
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const goferDecider = { initialState: initialGoferState, evolve: evolveGofer };
