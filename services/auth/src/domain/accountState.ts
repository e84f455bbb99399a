import type { AccountEvent } from '@oan/domain';

/**
 * Stream `account-<accountId>`; the id is keyed by ID_SECRET from the normalized email, or, for an
 * account registered earlier, a UUIDv5 of it (infra/ids.ts).
 */
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
  /** Outdated-connector notices already given, as `connector@latest`. */
  notices: readonly string[];
  /** Webhook endpoints already disabled (each is told once). */
  disabledWebhooks: readonly string[];
  /** Runtime jobs the owner was already told about (each is told once). */
  waitingJobs: readonly string[];
}

export type AccountState =
  | { status: 'unregistered' }
  | ({ status: 'active' } & Registered)
  | ({ status: 'banned'; bannedAt: string } & Registered);

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
        waitingJobs: [],
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
    case 'RuntimeJobWaitingNoticed':
      if (state.status === 'unregistered') return state;
      return { ...state, waitingJobs: [...state.waitingJobs, event.data.jobId] };
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}
