import type { AuthEvent } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

/** The auth context's events of one account. */
export function authOf(accountId: string) {
  return eventBuilders<AuthEvent>(
    {
      AccountRegistered: () => ({
        accountId,
        realm: 'oan',
        email: null,
        googleSub: null,
        sourcePlatform: 'dsh',
        method: 'pairing',
        registeredAt: at(0),
      }),
      ApiKeyIssued: () => ({
        accountId,
        apiKeyId: 'k1',
        keyHash: 'h',
        name: 'key',
        permissions: [],
        pairingCodeHash: 'p',
        issuedAt: at(1),
        expiresAt: null,
      }),
      ApiKeyRevoked: () => ({ accountId, apiKeyId: 'k1', revokedAt: at(2) }),
      AccountBanned: () => ({ accountId, reason: null, bannedAt: at(3) }),
      ConnectorOutdatedNoticed: () => ({
        accountId,
        connector: 'dsh',
        installed: '1.0.0',
        latest: '1.2.0',
        noticedAt: at(4),
      }),
      WebhookDisabled: () => ({
        accountId,
        webhookId: 'w1',
        url: 'https://hooks.example/oan',
        reason: 'failing',
        disabledAt: at(5),
      }),
      RuntimeJobWaitingNoticed: () => ({
        accountId,
        runtimeId: 'r1',
        runtimeName: 'agent',
        jobId: 'j1',
        eventId: 'e1',
        eventSeq: '7',
        eventType: 'gofer_question',
        goferId: 'g1',
        reason: 'attempts_exhausted',
        noticedAt: at(8),
      }),
      PairingCodeIssued: () => ({ codeHash: 'c', accountId, issuedAt: at(6), expiresAt: at(60) }),
      PairingCodeRedeemed: () => ({ codeHash: 'c', accountId, apiKeyId: 'k1', redeemedAt: at(7) }),
    },
    ({ data }) => ({ streamId: `account-${data.accountId}`, partitionKey: data.accountId }),
  );
}
