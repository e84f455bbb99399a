import { describe, expect, it } from 'vitest';
import type { ConversationEvent, ConversationMessageSent, SealedContent } from '@oan/domain';
import { deciderSpec } from '@oan/testing';
import {
  conversationDecider,
  type ConversationCommand,
  type NoticeKeyChange,
  type SendMessage,
} from '../src/domain/conversation.ts';
import type { ConversationState } from '../src/domain/conversationState.ts';

const NOW = '2026-12-03T08:00:00.000Z';
const CONV = 'conv-s';
const A = 'acc-a';
const B = 'acc-b';

const given = deciderSpec(expect, {
  ...conversationDecider,
  decide: (command: ConversationCommand, state: ConversationState) =>
    conversationDecider.decide({ ...command, metadata: { now: NOW } }, state),
});

const openedBetween = (a: string, b: string): ConversationEvent => ({
  type: 'ConversationOpened',
  data: {
    conversationId: CONV,
    matchId: 'match',
    threadId: 'thread',
    accountA: a,
    goferA: 'g-a',
    accountB: b,
    goferB: 'g-b',
    openedAt: NOW,
  },
});
const opened = openedBetween(A, B);
const closed: ConversationEvent = {
  type: 'ConversationClosed',
  data: { conversationId: CONV, reason: 'gofer_deleted', goferId: 'g-b', attachmentIds: [], closedAt: NOW },
};

const KEYS = { a1: 'a1a1a1a1-0000-4000-8000-000000000001', b1: 'b1b1b1b1-0000-4000-8000-000000000001' };
const B2 = 'b2b2b2b2-0000-4000-8000-000000000002';
const current = [
  { accountId: A, keyId: KEYS.a1 },
  { accountId: B, keyId: KEYS.b1 },
  { accountId: B, keyId: B2 },
];
const to = (accountId: string, keyId: string) => ({
  accountId,
  keyId,
  nonce: 'n'.repeat(16),
  wrappedKey: 'w'.repeat(64),
});
const envelope = (...recipients: ReturnType<typeof to>[]): SealedContent => ({
  alg: 'oan-sealed-v1',
  ephemeralKey: 'e'.repeat(43),
  nonce: 'n'.repeat(16),
  ciphertext: 'c'.repeat(30),
  recipients,
});
const all = envelope(to(A, KEYS.a1), to(B, KEYS.b1), to(B, B2));

const sendSealed = (sealed: SealedContent, over: Partial<SendMessage> = {}): ConversationCommand => ({
  type: 'SendMessage',
  data: { accountId: A, messageId: 'm-new', sealed, attachments: [], keys: current, previous: null, ...over },
});
const sentData = (over: Partial<ConversationMessageSent> = {}): ConversationMessageSent => ({
  conversationId: CONV,
  messageId: 'm-new',
  senderAccountId: A,
  recipientAccountId: B,
  content: '',
  attachments: [],
  changeSequence: 1,
  createdAt: NOW,
  sealed: all,
  clientMessageId: null,
  ...over,
});

describe('an open conversation, when a side sends a sealed message', () => {
  it('stores it with content "" and the envelope as sent', () => {
    given(opened)
      .when(sendSealed(all, { clientMessageId: 'c-1' }))
      .then({ type: 'ConversationMessageSent', data: sentData({ clientMessageId: 'c-1' }) });
  });

  it('needs no recipient of the sender’s own side', () => {
    const theirs = envelope(to(B, KEYS.b1), to(B, B2));
    given(opened)
      .when(sendSealed(theirs))
      .then({ type: 'ConversationMessageSent', data: sentData({ sealed: theirs }) });
  });

  it('refuses a recipient that is not a current key of one side, once, with a 400 code', () => {
    for (const bad of [
      envelope(to(B, KEYS.b1), to(B, B2), to(B, 'b3b3b3b3-0000-4000-8000-000000000003')),
      envelope(to(B, KEYS.b1), to(B, B2), to('acc-stranger', KEYS.b1)),
      envelope(to(B, KEYS.b1), to(A, B2)),
      envelope(to(B, KEYS.b1), to(B, B2), to(B, B2)),
    ]) {
      given(opened).when(sendSealed(bad)).thenThrows('SEALED_RECIPIENT_UNKNOWN');
    }
  });

  it('refuses to leave out a current key of the other side, unless allowMissing', () => {
    const one = envelope(to(B, KEYS.b1));
    given(opened).when(sendSealed(one)).thenThrows('SEALED_RECIPIENTS_MISSING');
    given(opened)
      .when(sendSealed(one, { allowMissing: false }))
      .thenThrows('SEALED_RECIPIENTS_MISSING');
    given(opened)
      .when(sendSealed(one, { allowMissing: true }))
      .then({ type: 'ConversationMessageSent', data: sentData({ sealed: one }) });
  });

  it('refuses it when the other side has no key, whatever allowMissing says', () => {
    const mine = envelope(to(A, KEYS.a1));
    const keys = [{ accountId: A, keyId: KEYS.a1 }];
    given(opened).when(sendSealed(mine, { keys })).thenThrows('RECIPIENT_HAS_NO_KEY');
    given(opened)
      .when(sendSealed(mine, { keys, allowMissing: true }))
      .thenThrows('RECIPIENT_HAS_NO_KEY');
  });

  it('refuses content beside it', () => {
    given(opened)
      .when(sendSealed(all, { content: 'clear' }))
      .thenThrows('SEALED_WITH_CONTENT');
    given(opened)
      .when(sendSealed(all, { content: '' }))
      .thenThrows('SEALED_WITH_CONTENT');
  });

  it('is refused to a third account and in a closed conversation with the probe-safe 403', () => {
    given(opened)
      .when(sendSealed(all, { accountId: 'acc-x' }))
      .thenThrows('CONVERSATION_FORBIDDEN');
    given(opened, closed).when(sendSealed(all)).thenThrows('CONVERSATION_FORBIDDEN');
  });
});

describe('an open conversation, when a clientMessageId was used before by the sender', () => {
  const plain = sentData({ sealed: null, content: 'hello', clientMessageId: 'c-1' });
  const sealedBefore = sentData({ clientMessageId: 'c-1' });
  const retry = (over: Partial<SendMessage>): ConversationCommand => ({
    type: 'SendMessage',
    data: {
      accountId: A,
      messageId: 'm-retry',
      attachments: [],
      keys: current,
      clientMessageId: 'c-1',
      previous: plain,
      ...over,
    },
  });

  it('decides nothing for the same body: the first message is the answer', () => {
    given(opened)
      .when(retry({ content: 'hello' }))
      .thenNothing();
    // the sealed checks are not run again: the keys changed since, the send is still the same.
    given(opened)
      .when(retry({ sealed: all, previous: sealedBefore, keys: [] }))
      .thenNothing();
    given(opened)
      .when(retry({ sealed: all, previous: sealedBefore, allowMissing: true }))
      .thenNothing();
  });

  it('refuses another body with CLIENT_MESSAGE_ID_REUSED', () => {
    for (const over of [
      { content: 'hello!' },
      { content: 'hello', attachmentIds: ['att-1'] },
      { sealed: all },
      { sealed: all, previous: sealedBefore, attachmentIds: ['att-1'] },
      { sealed: { ...all, ciphertext: 'd'.repeat(30) }, previous: sealedBefore },
      { sealed: envelope(to(B, KEYS.b1), to(B, B2), to(A, KEYS.a1)), previous: sealedBefore },
      { content: 'x', previous: sealedBefore },
    ]) {
      given(opened).when(retry(over)).thenThrows('CLIENT_MESSAGE_ID_REUSED');
    }
  });
});

describe('key notices', () => {
  const notice = (
    accountId: string,
    change: NoticeKeyChange['change'] = 'published',
  ): ConversationCommand => ({
    type: 'NoticeKeyChange',
    data: { accountId, keyId: KEYS.b1, fingerprint: 'ab12 '.repeat(10).trim(), change, changedAt: NOW },
  });

  it('tell the other side of an open conversation', () => {
    given(opened)
      .when(notice(B, 'retired'))
      .then({
        type: 'ConversationKeyChanged',
        data: {
          conversationId: CONV,
          accountId: B,
          recipientAccountId: A,
          keyId: KEYS.b1,
          fingerprint: 'ab12 '.repeat(10).trim(),
          change: 'retired',
          changedAt: NOW,
        },
      });
  });

  it('tell no one of a closed or unknown conversation, a third account, or a conversation with oneself', () => {
    given(opened, closed).when(notice(B)).thenNothing();
    given().when(notice(B)).thenNothing();
    given(opened).when(notice('acc-x')).thenNothing();
    given(openedBetween(A, A)).when(notice(A)).thenNothing();
  });
});
