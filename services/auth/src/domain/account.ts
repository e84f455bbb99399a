import { IllegalStateError, NotFoundError } from './errors.ts';
import type { AccountEvent, Timed } from '@oan/domain';

/** Stream `account-<accountId>`; the id is UUIDv5 of the normalized email (see commands/ids.ts). */
export interface ApiKeyView {
  name: string;
  issuedAt: string;
}

interface Registered {
  accountId: string;
  email: string | null;
  sourcePlatform: string;
  createdAt: string;
  /** Keys that are not revoked, by id. */
  apiKeys: Readonly<Record<string, ApiKeyView>>;
  /** A20: notices already given, as `connector@latest`. */
  notices: readonly string[];
  /** Issue 15: webhook endpoints already disabled (each is told once). */
  disabledWebhooks: readonly string[];
}

export type AccountState =
  | { status: 'unregistered' }
  | ({ status: 'active' } & Registered)
  | ({ status: 'banned'; bannedAt: string } & Registered);

export type AccountCommand =
  | {
      type: 'SignIn';
      data: {
        accountId: string;
        email: string | null;
        googleSub: string | null;
        platform: string;
        method: string;
      };
    }
  | {
      type: 'IssueApiKey';
      data: {
        apiKeyId: string;
        keyHash: string;
        name: string;
        permissions: string[];
        pairingCodeHash: string;
      };
    }
  | { type: 'RevokeApiKey'; data: { apiKeyId: string } }
  | { type: 'BanAccount'; data: { reason: string | null } }
  | { type: 'NoticeOutdatedConnector'; data: { connector: string; installed: string; latest: string } }
  | { type: 'DisableWebhook'; data: { webhookId: string; url: string; reason: string } };

export const initialAccountState = (): AccountState => ({ status: 'unregistered' });

export const noticeKey = (connector: string, latest: string) => `${connector}@${latest}`;

export function evolveAccount(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountRegistered':
      if (state.status !== 'unregistered') return state;
      return {
        status: 'active',
        accountId: event.data.accountId,
        email: event.data.email,
        sourcePlatform: event.data.sourcePlatform,
        createdAt: event.data.registeredAt,
        apiKeys: {},
        notices: [],
        disabledWebhooks: [],
      };
    case 'ApiKeyIssued':
      if (state.status === 'unregistered') return state;
      return {
        ...state,
        apiKeys: {
          ...state.apiKeys,
          [event.data.apiKeyId]: { name: event.data.name, issuedAt: event.data.issuedAt },
        },
      };
    case 'ApiKeyRevoked': {
      if (state.status === 'unregistered') return state;
      const { [event.data.apiKeyId]: _revoked, ...apiKeys } = state.apiKeys;
      return { ...state, apiKeys };
    }
    case 'AccountBanned':
      if (state.status !== 'active') return state;
      return { ...state, status: 'banned', bannedAt: event.data.bannedAt };
    case 'ConnectorOutdatedNoticed':
      if (state.status === 'unregistered') return state;
      return { ...state, notices: [...state.notices, noticeKey(event.data.connector, event.data.latest)] };
    case 'WebhookDisabled':
      if (state.status === 'unregistered') return state;
      return { ...state, disabledWebhooks: [...state.disabledWebhooks, event.data.webhookId] };
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}

const notFound = () => new NotFoundError('ACCOUNT_NOT_FOUND', 'Account not found');
const banned = () => new IllegalStateError('ACCOUNT_BANNED', 'Account is banned');

export function decideAccount(command: Timed<AccountCommand>, state: AccountState): AccountEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'SignIn': {
      // §2.6: `platform` only matters when this call creates the account; a login changes nothing.
      if (state.status === 'banned') throw banned();
      if (state.status === 'active') return [];
      const { accountId, email, googleSub, platform, method } = command.data;
      return [
        {
          type: 'AccountRegistered',
          data: {
            accountId,
            realm: 'oan',
            email,
            googleSub,
            sourcePlatform: platform,
            method,
            registeredAt: now,
          },
        },
      ];
    }
    case 'IssueApiKey': {
      if (state.status === 'unregistered') throw notFound();
      if (state.status === 'banned') throw banned();
      return [
        {
          type: 'ApiKeyIssued',
          data: { accountId: state.accountId, ...command.data, issuedAt: now, expiresAt: null },
        },
      ];
    }
    case 'RevokeApiKey': {
      // §4.2 (7): an unknown key and another account's key are the same refusal.
      if (state.status === 'unregistered' || !Object.hasOwn(state.apiKeys, command.data.apiKeyId)) {
        throw new NotFoundError('API_KEY_NOT_FOUND', 'API key not found');
      }
      return [
        {
          type: 'ApiKeyRevoked',
          data: { accountId: state.accountId, apiKeyId: command.data.apiKeyId, revokedAt: now },
        },
      ];
    }
    case 'BanAccount': {
      if (state.status === 'unregistered') throw notFound();
      if (state.status === 'banned') return []; // idempotent: banning twice records nothing new
      return [
        {
          type: 'AccountBanned',
          data: { accountId: state.accountId, reason: command.data.reason, bannedAt: now },
        },
      ];
    }
    case 'NoticeOutdatedConnector': {
      if (state.status === 'unregistered') throw notFound();
      const { connector, installed, latest } = command.data;
      // A20: once per (account, connector, latest), decided here on the write side.
      if (state.notices.includes(noticeKey(connector, latest))) return [];
      return [
        {
          type: 'ConnectorOutdatedNoticed',
          data: { accountId: state.accountId, connector, installed, latest, noticedAt: now },
        },
      ];
    }
    case 'DisableWebhook': {
      if (state.status === 'unregistered') throw notFound();
      // A crash between the last failed attempt and this command repeats it: told once per endpoint.
      if (state.disabledWebhooks.includes(command.data.webhookId)) return [];
      return [
        { type: 'WebhookDisabled', data: { accountId: state.accountId, ...command.data, disabledAt: now } },
      ];
    }
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const accountDecider = { initialState: initialAccountState, evolve: evolveAccount };
