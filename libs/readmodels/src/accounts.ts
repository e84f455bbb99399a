import { Migration, type MigrationDef } from '@oan/db';
import type { AuthEvent } from '@oan/domain';
import { projection } from './types.ts';

class CreateAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.accounts (
      id text primary key, email text, source_platform text not null, banned_at timestamptz,
      created_at timestamptz not null)`);
  }
}

/**
 * `read.accounts` had no reader: other contexts take an account's registration platform and ban from
 * the auth service's credential view (ADR 0006). Dropped, so nothing keeps a copy nobody reads.
 */
class DropAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop table if exists read.accounts');
  }
}

/** This read model's tables, in migration order (the first made `read.accounts`, the second drops it). */
export const accountsTables: MigrationDef[] = [
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
];
export const accountsDropped: MigrationDef = {
  name: 'read-0011-drop-accounts',
  class: DropAccountsReadModel,
};

/**
 * The account notices: a ban, an outdated connector, a disabled webhook. Accounts themselves, keys
 * and pairing codes are the auth service's own credential view (written with its commands).
 */
export const authProjection = projection<AuthEvent>({
  AccountRegistered: null,
  AccountBanned: async (_em, event) => {
    // §2.7: the notice is written (and pushed) before the gateways cut the account's sockets.
    return [
      {
        recipient: event.accountId,
        type: 'system_notice',
        source: 'platform',
        payload: { kind: 'account_banned' },
        createdAt: event.occurredAt,
      },
    ];
  },
  // §10.14 / A20: payload {kind, connector, installed, latest}.
  ConnectorOutdatedNoticed: async (_em, { accountId, occurredAt, data: d }) => [
    {
      recipient: accountId,
      type: 'system_notice',
      source: 'platform',
      payload: {
        kind: 'connector_outdated',
        connector: d.connector,
        installed: d.installed,
        latest: d.latest,
      },
      createdAt: occurredAt,
    },
  ],
  // Issue 15: payload {kind, webhookId, url, reason}.
  WebhookDisabled: async (_em, { accountId, occurredAt, data: d }) => [
    {
      recipient: accountId,
      type: 'system_notice',
      source: 'platform',
      payload: { kind: 'webhook_disabled', webhookId: d.webhookId, url: d.url, reason: d.reason },
      createdAt: occurredAt,
    },
  ],
  ApiKeyIssued: null,
  ApiKeyRevoked: null,
  PairingCodeIssued: null,
  PairingCodeRedeemed: null,
});
