import { describe, expect, it } from 'vitest';
import type { GoferEvent } from '@oan/domain';
import { deciderSpec } from '@oan/testing';
import { decideGofer, goferDecider, type GoferCommand } from '../src/domain/gofer.ts';
import { pairingMessageIdFor } from '../src/domain/pairing.ts';
import type { GoferState } from '../src/domain/goferState.ts';
import { localeFamily, normalizeLocale, placeholderTexts } from '../src/domain/goferTexts.ts';
import { parseSince } from '../src/http/chat.ts';

const NOW = '2026-11-29T08:00:00.000Z';
const OWNER = 'acc-owner';
const OTHER = 'acc-other';
const ids = { goferId: 'g1', accountId: OWNER };

/** given(events).when(command).then(events) | .thenThrows(code), at NOW. */
const given = deciderSpec(expect, {
  ...goferDecider,
  decide: (command: GoferCommand, state: GoferState) =>
    decideGofer({ ...command, metadata: { now: NOW } }, state),
});

const created: GoferEvent = {
  type: 'GoferCreated',
  data: {
    ...ids,
    chatId: 'c1',
    locale: 'en',
    name: 'New Gofer',
    description: 'd',
    sourcePlatform: 'dsh',
    humanReviewTriggers: ['money'],
    createdAt: NOW,
  },
};
const message = (
  messageId: string,
  over: Partial<Extract<GoferEvent, { type: 'ChatMessageAdded' }>['data']> = {},
) =>
  ({
    type: 'ChatMessageAdded',
    data: {
      ...ids,
      chatId: 'c1',
      messageId,
      role: 'user',
      content: 'hello',
      attachmentIds: [],
      kind: null,
      pairing: null,
      pendingQuery: false,
      responseConstraints: null,
      replyTo: null,
      createdAt: NOW,
      ...over,
    },
  }) satisfies GoferEvent;
const attachment = (attachmentId: string, kind: 'photo' | 'document'): GoferEvent => ({
  type: 'AttachmentAdded',
  data: {
    ...ids,
    attachmentId,
    kind,
    name: `${kind}.bin`,
    mimeType: kind === 'photo' ? 'image/png' : 'text/plain',
    size: 10,
    width: null,
    height: null,
    storageKey: `g1/${attachmentId}`,
    ragStatus: kind === 'photo' ? 'unsupported' : 'processing',
    createdAt: NOW,
  },
});
const deleted: GoferEvent = { type: 'GoferDeleted', data: { ...ids, deletedAt: NOW } };

const post = (
  data: Partial<Extract<GoferCommand, { type: 'PostUserMessage' }>['data']> = {},
): GoferCommand => ({
  type: 'PostUserMessage',
  data: {
    accountId: OWNER,
    messageId: 'm9',
    content: 'hi',
    attachmentIds: [],
    attachmentsEnabled: true,
    ...data,
  },
});
const turn = (
  data: Partial<Extract<GoferCommand, { type: 'AddAssistantTurn' }>['data']> = {},
): GoferCommand => ({
  type: 'AddAssistantTurn',
  data: {
    messageId: 'a1',
    replyTo: 'm1',
    content: 'What is your name?',
    pendingQuery: false,
    responseConstraints: null,
    profile: null,
    discoveryStatus: null,
    ...data,
  },
});

describe('a Gofer not created yet, when it is created', () => {
  const create = (locale: string): GoferCommand => ({
    type: 'CreateGofer',
    data: {
      ...ids,
      chatId: 'c1',
      greetingId: 'm0',
      locale,
      humanReviewTriggers: [],
      sourcePlatform: 'other',
    },
  });

  it('records the Gofer with locale placeholders and its greeting as the first assistant message, together', () => {
    for (const [locale, family] of [
      ['en', 'en'],
      ['zh-CN', 'zh'],
      ['fr', 'en'],
    ] as const) {
      const texts = placeholderTexts(family);
      given()
        .when(create(locale))
        .then(
          {
            type: 'GoferCreated',
            data: {
              ...ids,
              chatId: 'c1',
              locale,
              name: texts.name,
              description: texts.description,
              sourcePlatform: 'other',
              humanReviewTriggers: [],
              createdAt: NOW,
            },
          },
          message('m0', { role: 'assistant', content: texts.greeting }),
        );
    }
  });

  it('has distinct Chinese texts and falls back to English for other locales', () => {
    expect(placeholderTexts('zh').greeting).not.toBe(placeholderTexts('en').greeting);
    expect(localeFamily('zh_TW')).toBe('zh');
    expect(localeFamily('de-DE')).toBe('en');
    expect(localeFamily(undefined)).toBe('en');
    expect(normalizeLocale(undefined)).toBe('en');
    expect(normalizeLocale('  ')).toBe('en');
    expect(normalizeLocale('zh_CN')).toBe('zh-CN');
  });

  it('refuses an id that is already taken (a bug, never a caller error)', () => {
    expect(() =>
      decideGofer(
        { ...create('en'), metadata: { now: NOW } },
        [created].reduce(goferDecider.evolve, goferDecider.initialState()),
      ),
    ).toThrow(/already exists/);
  });
});

describe('an active Gofer, when its owner posts a message', () => {
  it('records content as sent, untrimmed', () => {
    given(created)
      .when(post({ content: '  my goal  ' }))
      .then(message('m9', { content: '  my goal  ' }));
  });

  it('records an attachment-only message with empty content', () => {
    given(created, attachment('p1', 'photo'))
      .when(post({ content: '', attachmentIds: ['p1'] }))
      .then(message('m9', { content: '', attachmentIds: ['p1'] }));
  });

  it('refuses blank content without attachments, two ids, unknown ids and attachments without storage', () => {
    given(created)
      .when(post({ content: '   ' }))
      .thenThrows('MESSAGE_EMPTY');
    given(created)
      .when(post({ content: '' }))
      .thenThrows('MESSAGE_EMPTY');
    given(created, attachment('p1', 'photo'), attachment('d1', 'document'))
      .when(post({ attachmentIds: ['p1', 'd1'] }))
      .thenThrows('TOO_MANY_ATTACHMENTS');
    given(created)
      .when(post({ attachmentIds: ['nope'] }))
      .thenThrows('ATTACHMENT_UNKNOWN');
    given(created, attachment('p1', 'photo'))
      .when(post({ attachmentIds: ['p1'], attachmentsEnabled: false }))
      .thenThrows('ATTACHMENTS_UNAVAILABLE');
  });

  it('refuses a photo already attached to an earlier message, but not a document', () => {
    given(created, attachment('p1', 'photo'), message('m1', { attachmentIds: ['p1'] }))
      .when(post({ attachmentIds: ['p1'] }))
      .thenThrows('PHOTO_ALREADY_USED');
    given(created, attachment('d1', 'document'), message('m1', { attachmentIds: ['d1'] }))
      .when(post({ attachmentIds: ['d1'] }))
      .then(message('m9', { content: 'hi', attachmentIds: ['d1'] }));
  });

  it('refuses unknown, deleted and foreign Gofers with the same probe-safe error', () => {
    given().when(post()).thenThrows('GOFER_FORBIDDEN');
    given(created, deleted).when(post()).thenThrows('GOFER_FORBIDDEN');
    given(created)
      .when(post({ accountId: OTHER }))
      .thenThrows('GOFER_FORBIDDEN');
    // Ownership comes before validation: a foreign Gofer never reveals what its checks would say.
    given(created)
      .when(post({ accountId: OTHER, content: '' }))
      .thenThrows('GOFER_FORBIDDEN');
  });
});

describe('an active Gofer, when its owner deletes it', () => {
  it('records the deletion for the owner', () => {
    given(created)
      .when({ type: 'DeleteGofer', data: { accountId: OWNER } })
      .then(deleted);
  });

  it('is 404 for an unknown or already deleted Gofer and 403 for a foreign one', () => {
    given()
      .when({ type: 'DeleteGofer', data: { accountId: OWNER } })
      .thenThrows('GOFER_NOT_FOUND');
    given(created, deleted)
      .when({ type: 'DeleteGofer', data: { accountId: OWNER } })
      .thenThrows('GOFER_NOT_FOUND');
    given(created)
      .when({ type: 'DeleteGofer', data: { accountId: OTHER } })
      .thenThrows('GOFER_FORBIDDEN');
  });
});

describe('an active Gofer, when its brain answers', () => {
  const profile = { name: 'Ada', description: 'Finds co-founders', values: ['honesty'], demands: ['a CTO'] };

  it('records the reply to a user message', () => {
    given(created, message('m1'))
      .when(turn())
      .then(message('a1', { role: 'assistant', content: 'What is your name?', replyTo: 'm1' }));
  });

  it('records nothing for a user message already answered (idempotent on replyTo)', () => {
    given(created, message('m1'), message('a0', { role: 'assistant', replyTo: 'm1' }))
      .when(turn())
      .thenNothing();
  });

  it('records nothing for a deleted or unknown Gofer (no events after deletion)', () => {
    given(created, message('m1'), deleted).when(turn()).thenNothing();
    given().when(turn()).thenNothing();
  });

  it('appends a changed profile and status before the message, in one decision', () => {
    given(created, message('m1'))
      .when(
        turn({
          pendingQuery: true,
          responseConstraints: '{"format":"boolean"}',
          profile,
          discoveryStatus: 'ready_for_pairing',
        }),
      )
      .then(
        { type: 'GoferProfileUpdated', data: { ...ids, ...profile, updatedAt: NOW } },
        {
          type: 'GoferDiscoveryStatusChanged',
          data: { ...ids, status: 'ready_for_pairing', changedAt: NOW },
        },
        message('a1', {
          role: 'assistant',
          content: 'What is your name?',
          replyTo: 'm1',
          pendingQuery: true,
          responseConstraints: '{"format":"boolean"}',
        }),
      );
  });

  it('leaves out an unchanged profile and status, and constraints on a turn that asks nothing', () => {
    const updated: GoferEvent = { type: 'GoferProfileUpdated', data: { ...ids, ...profile, updatedAt: NOW } };
    given(created, updated, message('m1'))
      .when(turn({ profile, discoveryStatus: 'in_discovery', responseConstraints: '{"format":"boolean"}' }))
      .then(message('a1', { role: 'assistant', content: 'What is your name?', replyTo: 'm1' }));
  });
});

describe('the state a Gofer’s events fold to', () => {
  const fold = (...events: GoferEvent[]): GoferState =>
    events.reduce(goferDecider.evolve, goferDecider.initialState());

  it('follows profile, status, attachments and their RAG status', () => {
    const s = fold(
      created,
      {
        type: 'GoferProfileUpdated',
        data: { ...ids, name: 'N', description: 'D', values: ['v'], demands: [], updatedAt: NOW },
      },
      { type: 'GoferDiscoveryStatusChanged', data: { ...ids, status: 'ready_for_pairing', changedAt: NOW } },
      attachment('d1', 'document'),
      {
        type: 'AttachmentRagStatusChanged',
        data: { ...ids, attachmentId: 'd1', ragStatus: 'ready', knowledge: 'k', changedAt: NOW },
      },
      message('m1', { attachmentIds: ['d1'] }),
    );
    expect(s).toMatchObject({
      status: 'active',
      name: 'N',
      values: ['v'],
      discoveryStatus: 'ready_for_pairing',
    });
    if (s.status === 'none') throw new Error('unreachable');
    expect(s.attachments.get('d1')).toMatchObject({ ragStatus: 'ready', usedBy: 'm1', storageKey: 'g1/d1' });
    expect(s.messages.map((m) => m.messageId)).toEqual(['m1']);
  });

  it('ignores everything but a creation before the Gofer exists, and a second creation', () => {
    expect(fold(deleted, message('m1'))).toEqual({ status: 'none' });
    const s = fold(created, { ...created, data: { ...created.data, accountId: OTHER } });
    expect(s).toMatchObject({ accountId: OWNER });
  });
});

describe('the `since` of the chat history', () => {
  it('reads ISO-8601 instants and nothing else', () => {
    expect(parseSince('2026-08-01T00:00:00.000Z')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('2026-08-01T02:00:00+02:00')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('2026-08-01T02:00:00+0200')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('2026-08-01T02:00:00 02:00')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('2026-08-01T00:00')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('2026-08-01')?.toISOString()).toBe('2026-08-01T00:00:00.000Z');
    expect(parseSince('0000-01-01T00:00:00Z')?.toISOString()).toBe('1970-01-01T00:00:00.000Z');
    for (const bad of [
      '',
      'yesterday',
      '1785542400000',
      '2026-13-01T00:00:00Z',
      '2026-08-01T25:00:00Z',
      ['a'],
      5,
    ]) {
      expect(parseSince(bad)).toBeNull();
    }
  });
});

describe('an active Gofer, when one of its threads is proposed', () => {
  const pairing = {
    threadId: 't1',
    self: { roleId: 'g1', name: 'Scout' },
    counterpart: { roleId: 'g2', name: '  Second\n Gofer ' },
  };
  const announce: GoferCommand = { type: 'AnnouncePairing', data: pairing };

  it('announces the pairing once in its role-chat, quoting the counterpart’s name on one line', () => {
    const [event] = given(created).when(announce).events();
    expect(event).toMatchObject({
      type: 'ChatMessageAdded',
      data: {
        ...ids,
        chatId: 'c1',
        messageId: pairingMessageIdFor('t1', 'g1'),
        role: 'system',
        kind: 'pairing',
        content: 'You have been paired with “Second Gofer”.',
        pairing: JSON.stringify(pairing),
        createdAt: NOW,
      },
    });
    given(created, event!).when(announce).thenNothing();
  });

  it('announces nothing for an unknown or deleted Gofer', () => {
    given().when(announce).thenNothing();
    given(created, deleted).when(announce).thenNothing();
  });
});

describe('an active Gofer, when an upload of it is stored and parsed', () => {
  const added = attachment('d1', 'document');
  const { createdAt: _createdAt, ...upload } = (added as Extract<GoferEvent, { type: 'AttachmentAdded' }>)
    .data;
  const add: GoferCommand = { type: 'AddAttachment', data: upload };
  const parsed: GoferCommand = {
    type: 'RecordRagStatus',
    data: { goferId: 'g1', attachmentId: 'd1', ragStatus: 'ready', knowledge: 'text' },
  };

  it('records the upload once, for its owner only', () => {
    given(created).when(add).then(added);
    given(created, added).when(add).thenNothing();
    given(created)
      .when({ ...add, data: { ...upload, accountId: OTHER } })
      .thenThrows('GOFER_FORBIDDEN');
    given(created, deleted).when(add).thenThrows('GOFER_FORBIDDEN');
  });

  it('records a parse outcome once, from processing only, and nothing after deletion', () => {
    const changed: GoferEvent = {
      type: 'AttachmentRagStatusChanged',
      data: { ...ids, attachmentId: 'd1', ragStatus: 'ready', knowledge: 'text', changedAt: NOW },
    };
    given(created, added).when(parsed).then(changed);
    given(created, added, changed).when(parsed).thenNothing();
    given(created, attachment('p1', 'photo'))
      .when({ ...parsed, data: { ...(parsed.data as object), attachmentId: 'p1' } } as GoferCommand)
      .thenNothing();
    given(created, added, deleted).when(parsed).thenNothing();
    given().when(parsed).thenNothing();
  });
});
