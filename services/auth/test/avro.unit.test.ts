import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { avroEventValidator, EventSchemaError, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { AUTH_EVENT_TYPES, type AuthEvent } from '@oan/domain';

const AUTH_SCHEMA_DIR = join(SCHEMAS_DIR, 'auth');
const registry = new SchemaRegistry(SCHEMAS_DIR);

const now = '2026-11-29T10:00:00.000Z';
/** One sample of every event type the service emits, shaped as the code builds it. */
const samples: AuthEvent[] = [
  {
    type: 'AccountRegistered',
    data: {
      accountId: 'a',
      realm: 'oan',
      email: 'x@y.z',
      googleSub: null,
      sourcePlatform: 'other',
      method: 'email',
      registeredAt: now,
    },
  },
  {
    type: 'AccountRegistered',
    data: {
      accountId: 'a',
      realm: 'oan',
      email: 'x@y.z',
      googleSub: '1234',
      sourcePlatform: 'dsh',
      method: 'google',
      registeredAt: now,
    },
  },
  {
    type: 'ApiKeyIssued',
    data: {
      accountId: 'a',
      apiKeyId: 'k',
      keyHash: 'f'.repeat(64),
      name: `connector (redeemed ${now})`,
      permissions: ['role:read', 'thread:read'],
      pairingCodeHash: 'e'.repeat(64),
      issuedAt: now,
      expiresAt: null,
    },
  },
  { type: 'ApiKeyRevoked', data: { accountId: 'a', apiKeyId: 'k', revokedAt: now } },
  { type: 'AccountBanned', data: { accountId: 'a', reason: null, bannedAt: now } },
  { type: 'AccountBanned', data: { accountId: 'a', reason: 'spam', bannedAt: now } },
  {
    type: 'ConnectorOutdatedNoticed',
    data: {
      accountId: 'a',
      connector: '@openagentnetwork/dsh-plugin',
      installed: '0.1.4',
      latest: '0.1.5',
      noticedAt: now,
    },
  },
  {
    type: 'WebhookDisabled',
    data: {
      accountId: 'a',
      webhookId: '0b9a3c52-6c55-4d0e-9d3f-2f8f7d1c9e11',
      url: 'https://hooks.example.com/oan',
      reason: 'HTTP 500',
      disabledAt: now,
    },
  },
  ...(['g1', null] as const).map((goferId) => ({
    type: 'RuntimeJobWaitingNoticed' as const,
    data: {
      accountId: 'a',
      runtimeId: '0b9a3c52-6c55-4d0e-9d3f-2f8f7d1c9e12',
      runtimeName: 'agent',
      jobId: '0b9a3c52-6c55-5d0e-9d3f-2f8f7d1c9e13',
      eventId: '0b9a3c52-6c55-4d0e-9d3f-2f8f7d1c9e14',
      eventSeq: '42',
      eventType: 'relay_message',
      goferId,
      reason: 'no_live_worker',
      noticedAt: now,
    },
  })),
  { type: 'PairingCodeIssued', data: { codeHash: 'c', accountId: 'a', issuedAt: now, expiresAt: now } },
  { type: 'PairingCodeRedeemed', data: { codeHash: 'c', accountId: 'a', apiKeyId: 'k', redeemedAt: now } },
];

describe('schemas/auth', () => {
  it('holds one parseable v1 record per event type, named after it, in namespace oan.auth', () => {
    const files = readdirSync(AUTH_SCHEMA_DIR).filter((f) => f.endsWith('.avsc'));
    expect(files.sort()).toEqual(AUTH_EVENT_TYPES.map((t) => `${t}.v1.avsc`).sort());
    for (const t of AUTH_EVENT_TYPES) expect(registry.schema(t, 1).avro.name).toBe(`oan.auth.${t}`);
  });

  it.each(samples.map((s) => [s.type, s] as const))(
    'validates a sample %s and round-trips it through Avro',
    (name, sample) => {
      const type = registry.schema(name, 1).avro;
      expect(type.isValid(sample.data, { noUndeclaredFields: true })).toBe(true);
      expect(type.fromBuffer(type.toBuffer(sample.data))).toEqual(sample.data);
    },
  );

  it('covers every event type with a sample', () => {
    expect(new Set(samples.map((s) => s.type))).toEqual(new Set(AUTH_EVENT_TYPES));
  });
});

describe('the event validator', () => {
  const validator = avroEventValidator(registry);

  it('accepts every sample', () => {
    for (const s of samples) expect(() => validator.assertValid(s.type, 1, s.data)).not.toThrow();
  });

  it('refuses a missing field, a wrong type, an undeclared field, an unknown type or version', () => {
    const bad: [string, number, unknown][] = [
      ['ApiKeyRevoked', 1, { accountId: 'a', apiKeyId: 'k' }],
      ['ApiKeyRevoked', 1, { accountId: 'a', apiKeyId: 1, revokedAt: now }],
      ['ApiKeyRevoked', 1, { accountId: 'a', apiKeyId: 'k', revokedAt: now, apiKey: 'gofers_x' }],
      ['AccountBanned', 1, { accountId: 'a', bannedAt: now }],
      ['NoSuchEvent', 1, {}],
      ['ApiKeyRevoked', 2, { accountId: 'a', apiKeyId: 'k', revokedAt: now }],
    ];
    for (const [type, version, data] of bad)
      expect(() => validator.assertValid(type, version, data)).toThrow(EventSchemaError);
  });
});
