import { isoUtc, sql } from '@oan/db';
import { accountStream } from '../infra/ids.ts';
import type { RevocationPublisher } from '../infra/push.ts';
import { accountCommands, type AuthContext } from './context.ts';

export interface ApiKeyListItem {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** `GET /api-keys`: the caller's keys from the credential view; never key material or hashes. */
export async function listApiKeys(ctx: AuthContext, accountId: string): Promise<ApiKeyListItem[]> {
  return sql<ApiKeyListItem>(
    ctx.orm.em.fork(),
    `select id::text as id, name, ${isoUtc('created_at')} as "createdAt", ${isoUtc('expires_at')} as "expiresAt",
            ${isoUtc('last_used_at')} as "lastUsedAt"
       from auth.api_keys where account_id = ? order by created_at, id`,
    [accountId],
  );
}

export interface RevokeLog {
  warn(obj: object, msg: string): void;
}

/**
 * Revoking a key: `ApiKeyRevoked` and the row's deletion commit together; only then are the gateways told
 * (best effort: a failed publish is logged and the revocation still stands).
 */
export async function revokeApiKey(
  ctx: AuthContext & { revocations: RevocationPublisher; log: RevokeLog },
  accountId: string,
  apiKeyId: string,
): Promise<void> {
  await accountCommands(ctx)(accountStream(accountId), { type: 'RevokeApiKey', data: { apiKeyId } });
  try {
    await ctx.revocations.keyRevoked(accountId, apiKeyId);
  } catch (err) {
    ctx.log.warn({ err, accountId, apiKeyId }, 'revocation committed but the push stream entry failed');
  }
}
