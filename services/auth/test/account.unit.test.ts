import { describe, expect, it } from 'vitest';
import { accountDecider, decideAccount, type AccountCommand } from '../src/domain/account.ts';
import type { AccountEvent, Timed } from '@oan/domain';
import { deciderSpec } from '@oan/testing';

const given = deciderSpec(expect, { ...accountDecider, decide: decideAccount });
const now = '2026-11-29T10:00:00.000Z';
const at = <C extends AccountCommand>(c: C): Timed<C> => ({ ...c, metadata: { now } });
const accountId = '7d1f6a5e-0b3c-5a2e-9d6f-1a2b3c4d5e6f';

const registered: AccountEvent = {
  type: 'AccountRegistered',
  data: {
    accountId,
    realm: 'oan',
    email: 'ada@example.com',
    googleSub: null,
    sourcePlatform: 'dsh',
    method: 'email',
    registeredAt: '2026-11-01T00:00:00.000Z',
  },
};
const keyIssued: AccountEvent = {
  type: 'ApiKeyIssued',
  data: {
    accountId,
    apiKeyId: 'key-1',
    keyHash: 'h1',
    name: 'connector',
    permissions: ['role:read'],
    pairingCodeHash: 'p1',
    issuedAt: '2026-11-02T00:00:00.000Z',
    expiresAt: null,
  },
};
const keyRevoked: AccountEvent = {
  type: 'ApiKeyRevoked',
  data: { accountId, apiKeyId: 'key-1', revokedAt: now },
};
const banned: AccountEvent = { type: 'AccountBanned', data: { accountId, reason: null, bannedAt: now } };
const noticed: AccountEvent = {
  type: 'ConnectorOutdatedNoticed',
  data: {
    accountId,
    connector: '@openagentnetwork/dsh-plugin',
    installed: '0.1.4',
    latest: '0.1.5',
    noticedAt: now,
  },
};

const signIn = (platform = 'openclaw') =>
  at({
    type: 'SignIn',
    data: { accountId, email: 'ada@example.com', googleSub: null, platform, method: 'email' },
  } as const);
const issue = at({
  type: 'IssueApiKey',
  data: {
    apiKeyId: 'key-2',
    keyHash: 'h2',
    name: 'connector (redeemed x)',
    permissions: ['role:read'],
    pairingCodeHash: 'p2',
  },
} as const);
const notice = (latest = '0.1.5', installed = '0.1.4') =>
  at({
    type: 'NoticeOutdatedConnector',
    data: { connector: '@openagentnetwork/dsh-plugin', installed, latest },
  } as const);

describe('an unregistered account', () => {
  it('is registered by its first sign-in, with the platform of that call', () =>
    given()
      .when(signIn())
      .then({ ...registered, data: { ...registered.data, sourcePlatform: 'openclaw', registeredAt: now } }));

  it('cannot get a key, be banned or be noticed', () => {
    given().when(issue).thenThrows('ACCOUNT_NOT_FOUND');
    given()
      .when(at({ type: 'BanAccount', data: { reason: null } }))
      .thenThrows('ACCOUNT_NOT_FOUND');
    given().when(notice()).thenThrows('ACCOUNT_NOT_FOUND');
  });

  it('has no key to revoke', () =>
    given()
      .when(at({ type: 'RevokeApiKey', data: { apiKeyId: 'key-1' } }))
      .thenThrows('API_KEY_NOT_FOUND'));
});

describe('a registered account', () => {
  it('signs in again without any event, whatever the platform (only a new account records it)', () =>
    given(registered).when(signIn('hermes')).thenNothing());

  it('gets an API key stamped with the command time and no expiry', () =>
    given(registered)
      .when(issue)
      .then({ type: 'ApiKeyIssued', data: { accountId, ...issue.data, issuedAt: now, expiresAt: null } }));

  it('revokes a key it holds', () =>
    given(registered, keyIssued)
      .when(at({ type: 'RevokeApiKey', data: { apiKeyId: 'key-1' } }))
      .then(keyRevoked));

  it('cannot revoke a key twice, an unknown key, or a prototype name', () => {
    given(registered, keyIssued, keyRevoked)
      .when(at({ type: 'RevokeApiKey', data: { apiKeyId: 'key-1' } }))
      .thenThrows('API_KEY_NOT_FOUND');
    given(registered)
      .when(at({ type: 'RevokeApiKey', data: { apiKeyId: 'key-9' } }))
      .thenThrows('API_KEY_NOT_FOUND');
    given(registered)
      .when(at({ type: 'RevokeApiKey', data: { apiKeyId: 'constructor' } }))
      .thenThrows('API_KEY_NOT_FOUND');
  });

  it('is banned once', () => {
    given(registered)
      .when(at({ type: 'BanAccount', data: { reason: 'spam' } }))
      .then({ ...banned, data: { ...banned.data, reason: 'spam' } });
    given(registered, banned)
      .when(at({ type: 'BanAccount', data: { reason: null } }))
      .thenNothing();
  });

  it('is told about an outdated connector once per (connector, latest)', () => {
    given(registered).when(notice()).then(noticed);
    given(registered, noticed).when(notice('0.1.5', '0.1.3')).thenNothing();
    given(registered, noticed)
      .when(notice('0.1.6'))
      .then({ ...noticed, data: { ...noticed.data, latest: '0.1.6' } });
  });
});

describe('a banned account', () => {
  it('can neither sign in nor get a key', () => {
    given(registered, banned).when(signIn()).thenThrows('ACCOUNT_BANNED');
    given(registered, banned).when(issue).thenThrows('ACCOUNT_BANNED');
  });
});

describe('an account whose webhook failed for the give-up period', () => {
  const webhook = { webhookId: 'wh-1', url: 'https://hooks.example.com/oan', reason: 'HTTP 500' };
  const disable = at({ type: 'DisableWebhook', data: webhook } as const);
  const disabled: AccountEvent = {
    type: 'WebhookDisabled',
    data: { accountId, ...webhook, disabledAt: now },
  };

  it('has the endpoint disabled, once', () => {
    given(registered).when(disable).then(disabled);
    given(registered, disabled).when(disable).thenNothing();
    given(registered, disabled)
      .when(at({ type: 'DisableWebhook', data: { ...webhook, webhookId: 'wh-2' } }))
      .then({ ...disabled, data: { ...disabled.data, webhookId: 'wh-2' } });
  });

  it('cannot be unregistered', () => {
    given().when(disable).thenThrows('ACCOUNT_NOT_FOUND');
  });
});
