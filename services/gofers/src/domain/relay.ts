import type { GoferEvent } from '@oan/domain';
import { chatMessage } from './chatMessage.ts';
import { placeholderTexts } from './goferTexts.ts';
import type { GoferState } from './goferState.ts';
import { assertOwnedActive } from './guards.ts';

/** The ConnectOnion relay commands of the Gofer aggregate (ADR 0023, ADR 0026). */
export type RelayCommand =
  /** `address` is the Gofer's own relay key's (the key is kept in the gofers schema, never here). */
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
    };

type Data<T extends RelayCommand['type']> = Extract<RelayCommand, { type: T }>['data'];

export function publishOnRelay(state: GoferState, d: Data<'PublishOnRelay'>, now: string): GoferEvent[] {
  assertOwnedActive(state, d.accountId); // the one probe-safe 403 of every /gofers/:goferId/* route
  if (state.relayAddress === d.address) return []; // PUT is idempotent
  const ids = { goferId: state.goferId, accountId: state.accountId };
  return [{ type: 'GoferRelayPublished', data: { ...ids, address: d.address, publishedAt: now } }];
}

export function unpublishFromRelay(
  state: GoferState,
  d: Data<'UnpublishFromRelay'>,
  now: string,
): GoferEvent[] {
  assertOwnedActive(state, d.accountId);
  if (state.relayAddress === null) return []; // DELETE is idempotent
  const ids = { goferId: state.goferId, accountId: state.accountId };
  return [
    { type: 'GoferRelayUnpublished', data: { ...ids, address: state.relayAddress, unpublishedAt: now } },
  ];
}

export function addRelayTurn(state: GoferState, d: Data<'AddRelayTurn'>, now: string): GoferEvent[] {
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
