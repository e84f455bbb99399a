import type { Decider, DiscoveryStatus, GoferEvent, Timed } from '@oan/domain';
import { ForbiddenError, NotFoundError, RejectedError } from './errors.ts';
import { placeholderTexts } from './goferTexts.ts';
import { evolveGofer, initialGoferState, type GoferProfile, type GoferState } from './goferState.ts';
import { announcePairing, type AnnouncePairing } from './pairing.ts';
import { addAttachment, recordRagStatus, type NewAttachment, type RagOutcome } from './attachments.ts';
import { assertOwnedActive } from './guards.ts';
import { addA2ATurn, publishOnA2A, unpublishFromA2A, type A2ACommand } from './a2a.ts';
import { chatMessage } from './chatMessage.ts';
import { addRelayTurn, publishOnRelay, unpublishFromRelay, type RelayCommand } from './relay.ts';
import * as callers from './callerQuestions.ts';

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
        /** Without an object-storage adapter any attachment id is refused. */
        attachmentsEnabled: boolean;
      };
    }
  | { type: 'DeleteGofer'; data: { accountId: string } }
  | {
      type: 'AddAssistantTurn';
      data: {
        messageId: string;
        replyTo: string | null;
        content: string;
        pendingQuery: boolean;
        /** JSON text of the frozen v1 `responseConstraints` shape. */
        responseConstraints: string | null;
        profile: GoferProfile | null;
        discoveryStatus: DiscoveryStatus | null;
      };
    }
  | { type: 'AnnouncePairing'; data: AnnouncePairing }
  | { type: 'AddAttachment'; data: NewAttachment }
  | { type: 'RecordRagStatus'; data: RagOutcome }
  | { type: 'AskOwnerForCaller'; data: callers.AskOwnerForCaller }
  | { type: 'RecordOwnerAnswer'; data: callers.RecordOwnerAnswer }
  | { type: 'WithdrawCallerQuestion'; data: callers.WithdrawCallerQuestion }
  | RelayCommand
  | A2ACommand;

type Data<T extends GoferCommand['type']> = Extract<GoferCommand, { type: T }>['data'];

const rejected = (code: ConstructorParameters<typeof RejectedError>[0], message: string) =>
  new RejectedError(code, message);

const sameProfile = (a: GoferProfile, b: GoferProfile) =>
  a.name === b.name &&
  a.description === b.description &&
  JSON.stringify(a.values) === JSON.stringify(b.values) &&
  JSON.stringify(a.demands) === JSON.stringify(b.demands);

export function createGofer(state: GoferState, data: Data<'CreateGofer'>, now: string): GoferEvent[] {
  // Ids are fresh UUIDs: an existing stream is a bug, never a caller's mistake.
  if (state.status !== 'none') throw new Error('Gofer stream already exists');
  const { greetingId, ...d } = data;
  const texts = placeholderTexts(d.locale);
  const common = { goferId: d.goferId, accountId: d.accountId, chatId: d.chatId };
  // Creating a Gofer: the greeting is stored with the Gofer, ahead of the goal the connector posts next.
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

export function postUserMessage(state: GoferState, d: Data<'PostUserMessage'>, now: string): GoferEvent[] {
  assertOwnedActive(state, d.accountId);
  // Posting a chat message: every check before the 202; each failure is a 400.
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

export function deleteGofer(state: GoferState, d: Data<'DeleteGofer'>, now: string): GoferEvent[] {
  // Unknown ⇒ 404, foreign ⇒ 403; a deleted Gofer is gone, for its owner too.
  if (state.status !== 'active') throw new NotFoundError('GOFER_NOT_FOUND', 'Gofer not found');
  if (state.accountId !== d.accountId) throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  return [
    { type: 'GoferDeleted', data: { goferId: state.goferId, accountId: state.accountId, deletedAt: now } },
  ];
}

export function addAssistantTurn(state: GoferState, d: Data<'AddAssistantTurn'>, now: string): GoferEvent[] {
  // No more events for a deleted Gofer; one reply per user message (redelivery, retries).
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

export function decideGofer(command: Timed<GoferCommand>, state: GoferState): GoferEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'CreateGofer':
      return createGofer(state, command.data, now);
    case 'PostUserMessage':
      return postUserMessage(state, command.data, now);
    case 'DeleteGofer':
      return deleteGofer(state, command.data, now);
    case 'PublishOnRelay':
      return publishOnRelay(state, command.data, now);
    case 'UnpublishFromRelay':
      return unpublishFromRelay(state, command.data, now);
    case 'AddRelayTurn':
      return addRelayTurn(state, command.data, now);
    case 'AddAssistantTurn':
      return addAssistantTurn(state, command.data, now);
    case 'AnnouncePairing':
      return announcePairing(state, command.data, now);
    case 'AddAttachment':
      return addAttachment(state, command.data, now);
    case 'RecordRagStatus':
      return recordRagStatus(state, command.data, now);
    case 'AskOwnerForCaller':
      return callers.askOwnerForCaller(state, command.data, now);
    case 'RecordOwnerAnswer':
      return callers.recordOwnerAnswer(state, command.data, now);
    case 'WithdrawCallerQuestion':
      return callers.withdrawCallerQuestion(state, command.data, now);
    case 'PublishOnA2A':
      return publishOnA2A(state, command.data, now);
    case 'UnpublishFromA2A':
      return unpublishFromA2A(state, command.data, now);
    case 'AddA2ATurn':
      return addA2ATurn(state, command.data, now);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const goferDecider: Decider<GoferState, GoferEvent, Timed<GoferCommand>> = {
  initialState: initialGoferState,
  evolve: evolveGofer,
  decide: decideGofer,
};
