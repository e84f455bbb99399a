import type { GoferEvent } from '@oan/domain';
import { chatMessage } from './chatMessage.ts';
import { placeholderTexts } from './goferTexts.ts';
import type { GoferState } from './goferState.ts';
import { assertOwnedActive } from './guards.ts';

/** The A2A commands of the Gofer aggregate (ADR 0035). */
export type A2ACommand =
  | { type: 'PublishOnA2A'; data: { accountId: string } }
  | { type: 'UnpublishFromA2A'; data: { accountId: string } }
  | {
      type: 'AddA2ATurn';
      data: {
        messageId: string;
        /** The caller's identity (`key:…` or `addr:…`). */
        caller: string;
        /** The caller's words (untrusted counterpart content) and the Gofer's answer. */
        asked: string;
        answered: string;
      };
    };

type Data<T extends A2ACommand['type']> = Extract<A2ACommand, { type: T }>['data'];

export function publishOnA2A(state: GoferState, d: Data<'PublishOnA2A'>, now: string): GoferEvent[] {
  assertOwnedActive(state, d.accountId); // the one probe-safe 403 of every /gofers/:goferId/* route
  if (state.a2aPublished) return []; // PUT is idempotent
  const ids = { goferId: state.goferId, accountId: state.accountId };
  return [{ type: 'GoferA2APublished', data: { ...ids, publishedAt: now } }];
}

export function unpublishFromA2A(state: GoferState, d: Data<'UnpublishFromA2A'>, now: string): GoferEvent[] {
  assertOwnedActive(state, d.accountId);
  if (!state.a2aPublished) return []; // DELETE is idempotent
  const ids = { goferId: state.goferId, accountId: state.accountId };
  return [{ type: 'GoferA2AUnpublished', data: { ...ids, unpublishedAt: now } }];
}

/**
 * One answered A2A turn, as an assistant row of kind 'a2a' (ADR 0026's wording: the caller's id and
 * words JSON-quoted and marked as a stranger's). Unpublished or deleted meanwhile: nothing is
 * recorded, and the caller gets no answer.
 */
export function addA2ATurn(state: GoferState, d: Data<'AddA2ATurn'>, now: string): GoferEvent[] {
  if (state.status !== 'active' || !state.a2aPublished) return [];
  return [
    chatMessage(
      { goferId: state.goferId, accountId: state.accountId, chatId: state.chatId },
      {
        messageId: d.messageId,
        role: 'assistant',
        kind: 'a2a',
        content: placeholderTexts(state.locale).a2aTurn(d.caller, d.asked, d.answered),
        createdAt: now,
      },
    ),
  ];
}
