import { Migration, sql, type MigrationDef } from '@oan/db';
import type { AuthEvent } from '@oan/domain';
import { projection } from './types';

class CreateAccountsReadModel extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.accounts (
      id text primary key, email text, source_platform text not null, banned_at timestamptz,
      created_at timestamptz not null)`);
  }
}

/** This read model's tables, in migration order. */
export const accountsTables: MigrationDef[] = [
  { name: 'read-0002-accounts', class: CreateAccountsReadModel },
];

/**
 * Accounts as other contexts read them (sourcePlatform for Gofers, bans), and the account notices.
 * Keys and pairing codes are the auth service's own credential view (written with its commands).
 */
export const authProjection = projection<AuthEvent>({
  async AccountRegistered(em, event) {
    await sql(
      em,
      `insert into read.accounts (id, email, source_platform, created_at) values (?, ?, ?, ?)
       on conflict (id) do nothing`,
      [event.accountId, event.data.email ?? null, event.data.sourcePlatform || 'other', event.occurredAt],
    );
    return [];
  },
  async AccountBanned(em, event) {
    await sql(em, 'update read.accounts set banned_at = coalesce(banned_at, ?) where id = ?', [
      event.occurredAt,
      event.accountId,
    ]);
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
