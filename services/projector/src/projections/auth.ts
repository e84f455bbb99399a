import { sql } from '@oan/db';
import type { NotificationSpec } from '../notifications';
import type { DomainEvent, Projection } from './types';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Accounts as other contexts read them (sourcePlatform for Gofers, bans), and the account notices. */
export const authProjection: Projection = {
  handles: new Set(['AccountRegistered', 'AccountBanned', 'ConnectorOutdatedNoticed']),
  async apply(em, event: DomainEvent): Promise<NotificationSpec[]> {
    const d = event.data;
    switch (event.type) {
      case 'AccountRegistered':
        await sql(
          em,
          `insert into read.accounts (id, email, source_platform, created_at) values (?, ?, ?, ?)
           on conflict (id) do nothing`,
          [event.accountId, str(d.email), str(d.sourcePlatform) ?? 'other', event.occurredAt],
        );
        return [];
      case 'AccountBanned':
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
      case 'ConnectorOutdatedNoticed':
        // §10.14 / A20: payload {kind, connector, installed, latest}.
        return [
          {
            recipient: event.accountId,
            type: 'system_notice',
            source: 'platform',
            payload: {
              kind: 'connector_outdated',
              connector: str(d.connector),
              installed: str(d.installed),
              latest: str(d.latest),
            },
            createdAt: event.occurredAt,
          },
        ];
      default:
        return [];
    }
  },
};
