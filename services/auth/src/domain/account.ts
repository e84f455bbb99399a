import type { AccountEvent, Decider, Timed } from '@oan/domain';
import { evolveAccount, initialAccountState, noticeKey, type AccountState } from './accountState.ts';
import { IllegalStateError, NotFoundError } from './errors.ts';

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
  | { type: 'DisableWebhook'; data: { webhookId: string; url: string; reason: string } }
  | {
      type: 'NoticeRuntimeJobWaiting';
      data: Omit<
        Extract<AccountEvent, { type: 'RuntimeJobWaitingNoticed' }>['data'],
        'accountId' | 'noticedAt'
      >;
    };

type Data<T extends AccountCommand['type']> = Extract<AccountCommand, { type: T }>['data'];

const notFound = () => new NotFoundError('ACCOUNT_NOT_FOUND', 'Account not found');
const banned = () => new IllegalStateError('ACCOUNT_BANNED', 'Account is banned');

export function signIn(state: AccountState, d: Data<'SignIn'>, now: string): AccountEvent[] {
  // The registration `platform` only matters when this call creates the account; a login changes nothing.
  if (state.status === 'banned') throw banned();
  if (state.status === 'active') return [];
  const { accountId, email, googleSub, platform, method } = d;
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

export function issueApiKey(state: AccountState, d: Data<'IssueApiKey'>, now: string): AccountEvent[] {
  if (state.status === 'unregistered') throw notFound();
  if (state.status === 'banned') throw banned();
  return [
    { type: 'ApiKeyIssued', data: { accountId: state.accountId, ...d, issuedAt: now, expiresAt: null } },
  ];
}

export function revokeApiKey(state: AccountState, d: Data<'RevokeApiKey'>, now: string): AccountEvent[] {
  // Revoking a key: an unknown key and another account's key are the same refusal (probe-safe).
  if (state.status === 'unregistered' || !Object.hasOwn(state.apiKeys, d.apiKeyId)) {
    throw new NotFoundError('API_KEY_NOT_FOUND', 'API key not found');
  }
  return [
    { type: 'ApiKeyRevoked', data: { accountId: state.accountId, apiKeyId: d.apiKeyId, revokedAt: now } },
  ];
}

export function banAccount(state: AccountState, d: Data<'BanAccount'>, now: string): AccountEvent[] {
  if (state.status === 'unregistered') throw notFound();
  if (state.status === 'banned') return []; // idempotent: banning twice records nothing new
  return [{ type: 'AccountBanned', data: { accountId: state.accountId, reason: d.reason, bannedAt: now } }];
}

export function noticeOutdatedConnector(
  state: AccountState,
  d: Data<'NoticeOutdatedConnector'>,
  now: string,
): AccountEvent[] {
  if (state.status === 'unregistered') throw notFound();
  const { connector, installed, latest } = d;
  // Once per (account, connector, latest), decided here on the write side.
  if (state.notices.includes(noticeKey(connector, latest))) return [];
  return [
    {
      type: 'ConnectorOutdatedNoticed',
      data: { accountId: state.accountId, connector, installed, latest, noticedAt: now },
    },
  ];
}

export function disableWebhook(state: AccountState, d: Data<'DisableWebhook'>, now: string): AccountEvent[] {
  if (state.status === 'unregistered') throw notFound();
  // A crash between the last failed attempt and this command repeats it: told once per endpoint.
  if (state.disabledWebhooks.includes(d.webhookId)) return [];
  return [{ type: 'WebhookDisabled', data: { accountId: state.accountId, ...d, disabledAt: now } }];
}

export function noticeRuntimeJobWaiting(
  state: AccountState,
  d: Data<'NoticeRuntimeJobWaiting'>,
  now: string,
): AccountEvent[] {
  if (state.status === 'unregistered') throw notFound();
  // Once per job, decided here on the write side: a retried or racing sweep records nothing new.
  if (state.waitingJobs.includes(d.jobId)) return [];
  return [{ type: 'RuntimeJobWaitingNoticed', data: { accountId: state.accountId, ...d, noticedAt: now } }];
}

export function decideAccount(command: Timed<AccountCommand>, state: AccountState): AccountEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'SignIn':
      return signIn(state, command.data, now);
    case 'IssueApiKey':
      return issueApiKey(state, command.data, now);
    case 'RevokeApiKey':
      return revokeApiKey(state, command.data, now);
    case 'BanAccount':
      return banAccount(state, command.data, now);
    case 'NoticeOutdatedConnector':
      return noticeOutdatedConnector(state, command.data, now);
    case 'DisableWebhook':
      return disableWebhook(state, command.data, now);
    case 'NoticeRuntimeJobWaiting':
      return noticeRuntimeJobWaiting(state, command.data, now);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const accountDecider: Decider<AccountState, AccountEvent, Timed<AccountCommand>> = {
  initialState: initialAccountState,
  evolve: evolveAccount,
  decide: decideAccount,
};
