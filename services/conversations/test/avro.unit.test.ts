import { describe, expect, it } from 'vitest';
import type { ConversationMessageSent } from '@oan/domain';
import { avroEventValidator, EventSchemaError, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';

const registry = new SchemaRegistry(SCHEMAS_DIR);
const validator = avroEventValidator(registry);

const v1: Omit<ConversationMessageSent, 'sealed' | 'clientMessageId'> = {
  conversationId: 'c',
  messageId: 'm',
  senderAccountId: 'a',
  recipientAccountId: 'b',
  content: 'hello',
  attachments: [],
  changeSequence: 1,
  createdAt: '2026-12-03T08:00:00.000Z',
};
const sealed = {
  alg: 'oan-sealed-v1',
  ephemeralKey: 'e',
  nonce: 'n',
  ciphertext: 'c',
  recipients: [{ accountId: 'b', keyId: 'k', nonce: 'n', wrappedKey: 'w' }],
};

describe('ConversationMessageSent, version 2', () => {
  it('reads a version-1 record with no sealed content and no clientMessageId', () => {
    const { value } = registry.encode('ConversationMessageSent', v1, 1);
    expect(registry.decode('ConversationMessageSent', 1, value)).toEqual({
      ...v1,
      sealed: null,
      clientMessageId: null,
    });
  });

  it('carries the sealed content and the clientMessageId, in the wire order', () => {
    const data = { ...v1, content: '', sealed, clientMessageId: 'x' };
    const { value, headers } = registry.encode('ConversationMessageSent', data);
    expect(headers['oan-schema-version']).toBe('2');
    const read = registry.decode<ConversationMessageSent>('ConversationMessageSent', 2, value);
    expect(JSON.stringify(read.sealed)).toBe(JSON.stringify(sealed));
    expect(read).toEqual(data);
  });

  it('is what the event store writes when an event names no version: every field, explicitly', () => {
    expect(validator.latestVersion('ConversationMessageSent')).toBe(2);
    expect(validator.latestVersion('DeviceKeyPublished')).toBe(1);
    expect(() => validator.latestVersion('NoSuchEvent')).toThrow(EventSchemaError);
    expect(() => validator.assertValid('ConversationMessageSent', 2, v1)).toThrow(/sealed, clientMessageId/);
    validator.assertValid('ConversationMessageSent', 2, { ...v1, sealed: null, clientMessageId: null });
    // version 1 never takes the new fields (nothing is silently dropped).
    expect(() => validator.assertValid('ConversationMessageSent', 1, { ...v1, sealed: null })).toThrow(
      EventSchemaError,
    );
  });
});

describe('the key directory’s events', () => {
  it('match their schemas', () => {
    validator.assertValid('DeviceKeyPublished', 1, {
      accountId: 'a',
      keyId: 'k',
      publicKey: 'p',
      fingerprint: 'f',
      publishedAt: '2026-12-03T08:00:00.000Z',
    });
    validator.assertValid('DeviceKeyRetired', 1, {
      accountId: 'a',
      keyId: 'k',
      fingerprint: 'f',
      retiredAt: '2026-12-03T08:00:00.000Z',
    });
    validator.assertValid('ConversationKeyChanged', 1, {
      conversationId: 'c',
      accountId: 'a',
      recipientAccountId: 'b',
      keyId: 'k',
      fingerprint: 'f',
      change: 'published',
      changedAt: '2026-12-03T08:00:00.000Z',
    });
  });
});
