import { describe, expect, it } from 'vitest';
import type { ConversationEvent, SealedContent } from '@oan/domain';
import { deciderSpec } from '@oan/testing';
import { conversationDecider, type ConversationCommand } from '../src/domain/conversation.ts';
import {
  indexChangesOf,
  type ConversationState,
  type StoredAttachment,
  type StoredMessage,
  type StoredRevision,
} from '../src/domain/conversationState.ts';
import type { ReviseMessage } from '../src/domain/revisions.ts';

const SENT_AT = '2026-11-29T08:00:00.000Z';
const after = (ms: number) => new Date(Date.parse(SENT_AT) + ms).toISOString();
const DAY = 24 * 60 * 60 * 1000;
const CONV = 'conv-1';
const A = 'acc-a';
const B = 'acc-b';

/** given(events).when(command).then(events) | .thenThrows(code), at `now`. */
const at = (now: string) =>
  deciderSpec(expect, {
    ...conversationDecider,
    decide: (command: ConversationCommand, state: ConversationState) =>
      conversationDecider.decide({ ...command, metadata: { now } }, state),
  });
const given = at(after(60_000));

const opened: ConversationEvent = {
  type: 'ConversationOpened',
  data: {
    conversationId: CONV,
    matchId: 'match-1',
    threadId: 'thread-1',
    accountA: A,
    goferA: 'g-a',
    accountB: B,
    goferB: 'g-b',
    openedAt: '2026-11-29T07:00:00.000Z',
  },
};
const closed: ConversationEvent = {
  type: 'ConversationClosed',
  data: {
    conversationId: CONV,
    reason: 'gofer_deleted',
    goferId: 'g-b',
    attachmentIds: [],
    closedAt: SENT_AT,
  },
};

const B_KEY = '6f7c1f7e-7c1a-4b55-9d0e-0a3c5e2b9f10';
const b64 = (n: number, fill: number) => Buffer.alloc(n, fill).toString('base64url');
const sealed = (fill = 1): SealedContent => ({
  alg: 'oan-sealed-v1',
  ephemeralKey: b64(32, fill),
  nonce: b64(12, fill),
  ciphertext: b64(40, fill),
  recipients: [
    {
      accountId: B,
      keyId: B_KEY,
      nonce: b64(12, fill),
      wrappedKey: b64(48, fill),
    },
  ],
});

/** A's message m1, as the index has it. */
const message = (over: Partial<StoredMessage> = {}): StoredMessage => ({
  id: 'm1',
  senderAccountId: A,
  changeSequence: 4,
  recalled: false,
  attachmentIds: [],
  createdAt: SENT_AT,
  corrections: 0,
  sealed: false,
  ...over,
});
const file = (id: string, over: Partial<StoredAttachment> = {}): StoredAttachment => ({
  attachmentId: id,
  kind: 'document',
  name: `${id}.pdf`,
  mimeType: 'application/pdf',
  size: 3,
  width: null,
  height: null,
  uploaderAccountId: A,
  messageId: 'm1',
  deleted: false,
  ...over,
});

const revise = (over: Partial<ReviseMessage>): ConversationCommand => ({
  type: 'ReviseMessage',
  data: {
    accountId: A,
    messageId: 'm1',
    revisionId: 'r-new',
    clientMessageId: 'c-1',
    action: 'correct',
    content: 'fixed',
    message: message(),
    prior: null,
    attachments: [],
    usedElsewhere: [],
    keys: [{ accountId: B, keyId: B_KEY }],
    ...over,
  },
});
const retract = (over: Partial<ReviseMessage> = {}) =>
  revise({ action: 'retract', content: undefined, clientMessageId: 'c-r', ...over });

const corrected = (
  over: Partial<Extract<ConversationEvent, { type: 'ConversationMessageCorrected' }>['data']> = {},
): ConversationEvent => ({
  type: 'ConversationMessageCorrected',
  data: {
    conversationId: CONV,
    messageId: 'm1',
    revisionId: 'r-new',
    senderAccountId: A,
    recipientAccountId: B,
    clientMessageId: 'c-1',
    changeSequence: 4,
    content: 'fixed',
    sealed: null,
    count: 1,
    correctedAt: after(60_000),
    ...over,
  },
});
const retracted = (
  over: Partial<Extract<ConversationEvent, { type: 'ConversationMessageRetracted' }>['data']> = {},
): ConversationEvent => ({
  type: 'ConversationMessageRetracted',
  data: {
    conversationId: CONV,
    messageId: 'm1',
    revisionId: 'r-new',
    senderAccountId: A,
    recipientAccountId: B,
    clientMessageId: 'c-r',
    changeSequence: 4,
    count: 0,
    attachmentIds: [],
    retractedAt: after(60_000),
    ...over,
  },
});
const prior = (over: Partial<StoredRevision> = {}): StoredRevision => ({
  id: 'r-old',
  messageId: 'm1',
  senderAccountId: A,
  clientMessageId: 'c-1',
  action: 'correct',
  content: 'fixed',
  sealed: null,
  count: 1,
  at: after(1000),
  ...over,
});

describe('when the conversation is not the caller’s, or not open', () => {
  it('refuses a revision with the one probe-safe 403', () => {
    given().when(revise({})).thenThrows('CONVERSATION_FORBIDDEN');
    given(opened)
      .when(revise({ accountId: 'acc-x' }))
      .thenThrows('CONVERSATION_FORBIDDEN');
    given(opened, closed).when(retract()).thenThrows('CONVERSATION_FORBIDDEN');
  });
});

describe('when the sender corrects its plain message', () => {
  it('replaces the text under a new revision id, the message keeping its id and changeSequence', () => {
    given(opened).when(revise({})).then(corrected());
    given(opened)
      .when(revise({ message: message({ corrections: 3 }), content: 'again' }))
      .then(corrected({ content: 'again', count: 4 }));
  });

  it('takes the rules of sending: blank only with attachments (then ""), not too long', () => {
    given(opened)
      .when(revise({ content: '  ' }))
      .thenThrows('MESSAGE_EMPTY');
    given(opened)
      .when(revise({ content: 'x'.repeat(20_001) }))
      .thenThrows('MESSAGE_TOO_LONG');
    given(opened)
      .when(revise({ content: ' \n', message: message({ attachmentIds: ['f1'] }) }))
      .then(corrected({ content: '' }));
  });

  it('refuses sealed content for a plain message, and content for a sealed one', () => {
    given(opened)
      .when(revise({ content: undefined, sealed: sealed() }))
      .thenThrows('REVISION_KIND_MISMATCH');
    given(opened)
      .when(revise({ message: message({ sealed: true }) }))
      .thenThrows('REVISION_KIND_MISMATCH');
  });

  it('refuses the other side’s message (403) and an unknown or withdrawn one (404)', () => {
    given(opened)
      .when(revise({ accountId: B }))
      .thenThrows('MESSAGE_NOT_YOURS');
    given(opened)
      .when(revise({ message: null }))
      .thenThrows('MESSAGE_NOT_FOUND');
    given(opened)
      .when(revise({ message: message({ recalled: true }) }))
      .thenThrows('MESSAGE_NOT_FOUND');
    // A withdrawn message of the other side is just as gone.
    given(opened)
      .when(revise({ accountId: B, message: message({ recalled: true }) }))
      .thenThrows('MESSAGE_NOT_FOUND');
  });

  it('allows 24 hours from createdAt to the millisecond, not one more', () => {
    at(after(DAY))(opened)
      .when(revise({}))
      .then(corrected({ correctedAt: after(DAY) }));
    at(after(DAY + 1))(opened)
      .when(revise({}))
      .thenThrows('REVISION_WINDOW_CLOSED');
    at(after(DAY + 1))(opened)
      .when(retract())
      .thenThrows('REVISION_WINDOW_CLOSED');
  });

  it('takes ten corrections, refuses the eleventh, and still lets it be retracted', () => {
    given(opened)
      .when(revise({ message: message({ corrections: 9 }) }))
      .then(corrected({ count: 10 }));
    given(opened)
      .when(revise({ message: message({ corrections: 10 }) }))
      .thenThrows('REVISION_LIMIT');
    given(opened)
      .when(retract({ message: message({ corrections: 10 }) }))
      .then(retracted({ count: 10 }));
  });
});

describe('when the sender corrects its sealed message', () => {
  it('replaces the sealed content, the text staying ""', () => {
    given(opened)
      .when(revise({ content: undefined, sealed: sealed(2), message: message({ sealed: true }) }))
      .then(corrected({ content: '', sealed: sealed(2) }));
  });

  it("passes the checks of sending: every recipient a current key, the other side's keys all covered", () => {
    const asSealed = { content: undefined, sealed: sealed(2), message: message({ sealed: true }) };
    given(opened)
      .when(revise({ ...asSealed, keys: [{ accountId: B, keyId: '0e9c7a52-1d1b-4a8e-8c6f-3b2a1d0e9f87' }] }))
      .thenThrows('SEALED_RECIPIENT_UNKNOWN');
    const second = { accountId: B, keyId: '0e9c7a52-1d1b-4a8e-8c6f-3b2a1d0e9f87' };
    given(opened)
      .when(revise({ ...asSealed, keys: [{ accountId: B, keyId: B_KEY }, second] }))
      .thenThrows('SEALED_RECIPIENTS_MISSING');
    given(opened)
      .when(revise({ ...asSealed, keys: [{ accountId: B, keyId: B_KEY }, second], allowMissing: true }))
      .then(corrected({ content: '', sealed: sealed(2) }));
    given(opened)
      .when(revise({ ...asSealed, keys: [] }))
      .thenThrows('SEALED_RECIPIENT_UNKNOWN');
  });
});

describe('when a clientMessageId was used before by the caller in this conversation', () => {
  it('answers the same correction again with nothing new, even after later corrections', () => {
    given(opened)
      .when(revise({ prior: prior(), message: message({ corrections: 5 }) }))
      .thenNothing();
    given(opened)
      .when(
        revise({ prior: prior({ content: '' }), content: '   ', message: message({ attachmentIds: ['f'] }) }),
      )
      .thenNothing();
    const envelope = sealed(3);
    given(opened)
      .when(
        revise({
          content: undefined,
          sealed: sealed(3),
          prior: prior({ content: '', sealed: envelope }),
          message: message({ sealed: true }),
        }),
      )
      .thenNothing();
  });

  it('refuses another body, another message or another action with 409', () => {
    given(opened)
      .when(revise({ prior: prior(), content: 'other' }))
      .thenThrows('CLIENT_MESSAGE_ID_REUSED');
    given(opened)
      .when(revise({ prior: prior({ messageId: 'm0' }) }))
      .thenThrows('CLIENT_MESSAGE_ID_REUSED');
    given(opened)
      .when(retract({ clientMessageId: 'c-1', prior: prior() }))
      .thenThrows('CLIENT_MESSAGE_ID_REUSED');
    given(opened)
      .when(
        revise({
          content: undefined,
          sealed: sealed(4),
          prior: prior({ content: '', sealed: sealed(3) }),
          message: message({ sealed: true }),
        }),
      )
      .thenThrows('CLIENT_MESSAGE_ID_REUSED');
  });

  it('answers a retraction again, but not a correction of the message it withdrew', () => {
    const gone = message({ recalled: true });
    given(opened)
      .when(
        retract({ prior: prior({ clientMessageId: 'c-r', action: 'retract', content: '' }), message: gone }),
      )
      .thenNothing();
    given(opened)
      .when(revise({ prior: prior(), message: gone }))
      .thenThrows('MESSAGE_NOT_FOUND');
  });
});

describe('when the sender retracts its message', () => {
  it('deletes its files but those another message uses or that are gone already', () => {
    const files = [file('f1'), file('f2'), file('f3', { deleted: true })];
    given(opened)
      .when(
        retract({
          message: message({ attachmentIds: ['f1', 'f2', 'f3'], corrections: 2 }),
          attachments: files,
          usedElsewhere: ['f2'],
        }),
      )
      .then(retracted({ attachmentIds: ['f1'], count: 2 }));
  });
});

describe('the write-side index of revisions', () => {
  it('counts a correction and keeps it for a retry', () => {
    expect(indexChangesOf(corrected({ count: 3, sealed: sealed(), content: '' }))).toEqual([
      { type: 'message_corrected', messageId: 'm1', corrections: 3 },
      {
        type: 'revision_stored',
        conversationId: CONV,
        revision: prior({ id: 'r-new', content: '', sealed: sealed(), count: 3, at: after(60_000) }),
      },
    ]);
  });

  it('marks a retraction withdrawn, strips the corrections, keeps it for a retry, deletes the files', () => {
    expect(indexChangesOf(retracted({ attachmentIds: ['f1'], count: 2 }))).toEqual([
      { type: 'message_recalled', messageId: 'm1' },
      { type: 'revisions_stripped', messageId: 'm1' },
      {
        type: 'revision_stored',
        conversationId: CONV,
        revision: prior({
          id: 'r-new',
          clientMessageId: 'c-r',
          action: 'retract',
          content: '',
          count: 2,
          at: after(60_000),
        }),
      },
      { type: 'attachments_deleted', conversationId: CONV, attachmentIds: ['f1'] },
    ]);
  });
});
