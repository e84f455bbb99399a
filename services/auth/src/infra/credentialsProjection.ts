import { sql, type EntityManager } from '@oan/db';
import type { StoredEvent } from '@oan/eventstore';
import type { AuthEvent } from '@oan/domain';

/**
 * The inline projection of the credential view (auth.accounts, auth.api_keys), run by every command
 * inside the transaction of its append: a key is usable exactly when its ApiKeyIssued is committed
 * and refused from the moment its ApiKeyRevoked is (revocation is immediate everywhere).
 */
export async function projectCredentials(em: EntityManager, appended: StoredEvent[]): Promise<void> {
  for (const stored of appended) {
    const event = { type: stored.type, data: stored.data } as AuthEvent;
    switch (event.type) {
      case 'AccountRegistered': {
        const d = event.data;
        await sql(
          em,
          `insert into auth.accounts (id, realm, email, google_sub, source_platform, created_at) values (?, ?, ?, ?, ?, ?)`,
          [d.accountId, d.realm, d.email, d.googleSub, d.sourcePlatform, d.registeredAt],
        );
        break;
      }
      case 'ApiKeyIssued': {
        const d = event.data;
        await sql(
          em,
          `insert into auth.api_keys (id, account_id, key_hash, name, permissions, created_at, expires_at)
           values (?, ?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?, ?)`,
          [
            d.apiKeyId,
            d.accountId,
            d.keyHash,
            d.name,
            JSON.stringify(d.permissions),
            d.issuedAt,
            d.expiresAt,
          ],
        );
        break;
      }
      case 'ApiKeyRevoked':
        await sql(em, 'delete from auth.api_keys where id = ? and account_id = ?', [
          event.data.apiKeyId,
          event.data.accountId,
        ]);
        break;
      case 'AccountBanned':
        await sql(em, 'update auth.accounts set banned_at = ? where id = ?', [
          event.data.bannedAt,
          event.data.accountId,
        ]);
        break;
      case 'WebhookDisabled':
        // Not the credential view: the delivery state (webhooks/store.ts), stopped with the event.
        await sql(em, 'update auth.webhooks set disabled_at = ? where id = ? and account_id = ?', [
          event.data.disabledAt,
          event.data.webhookId,
          event.data.accountId,
        ]);
        break;
      case 'ConnectorOutdatedNoticed':
      case 'RuntimeJobWaitingNoticed':
      case 'PairingCodeIssued':
      case 'PairingCodeRedeemed':
        break; // not part of the credential view
      default: {
        const unexpected: never = event;
        throw new Error(`Unknown auth event ${(unexpected as { type: string }).type}`);
      }
    }
  }
}
