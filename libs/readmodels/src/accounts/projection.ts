import type { AuthEvent } from '@oan/domain';
import { projection } from '../types.ts';
import { accountBanned, connectorOutdated, runtimeJobWaiting, webhookDisabled } from './notifications.ts';

/**
 * The account notices: a ban, an outdated connector, a disabled webhook, a runtime job waiting for the owner. Accounts themselves, keys
 * and pairing codes are the auth service's own credential view (written with its commands), so this
 * projection writes no rows.
 */
export const authProjection = projection<AuthEvent>({
  AccountRegistered: null,
  // A ban's notice is written (and pushed) before the gateways cut the account's sockets.
  AccountBanned: async (_em, event) => accountBanned(event),
  ConnectorOutdatedNoticed: async (_em, event) => connectorOutdated(event),
  WebhookDisabled: async (_em, event) => webhookDisabled(event),
  RuntimeJobWaitingNoticed: async (_em, event) => runtimeJobWaiting(event),
  ApiKeyIssued: null,
  ApiKeyRevoked: null,
  PairingCodeIssued: null,
  PairingCodeRedeemed: null,
});
