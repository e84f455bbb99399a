import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '@oan/auth';
import { sql, type MikroORM } from '@oan/db';
import { API_KEY_PERMISSIONS } from '@oan/protocol';

/**
 * Rows of the credential view (auth.accounts / auth.api_keys, docs/adr/0006) written directly, for
 * tests of the libraries and services that read them without running the auth service.
 */
export async function insertAccount(
  orm: MikroORM,
  opts: { realm?: string; banned?: boolean; platform?: string } = {},
): Promise<string> {
  const id = randomUUID();
  await sql(
    orm.em.fork(),
    `insert into auth.accounts (id, realm, email, source_platform, banned_at, created_at) values (?, ?, ?, ?, ?, now())`,
    [
      id,
      opts.realm ?? 'oan',
      `${id}@example.test`,
      opts.platform ?? 'other',
      opts.banned ? new Date() : null,
    ],
  );
  return id;
}

export async function insertApiKey(
  orm: MikroORM,
  accountId: string,
  opts: { permissions?: readonly string[]; expiresAt?: Date } = {},
): Promise<{ key: string; id: string }> {
  const key = generateApiKey();
  const id = randomUUID();
  await sql(
    orm.em.fork(),
    `insert into auth.api_keys (id, account_id, key_hash, name, permissions, created_at, expires_at)
     values (?, ?, ?, 'test key', array(select jsonb_array_elements_text(?::jsonb)), now(), ?)`,
    [
      id,
      accountId,
      hashApiKey(key),
      JSON.stringify(opts.permissions ?? API_KEY_PERMISSIONS),
      opts.expiresAt ?? null,
    ],
  );
  return { key, id };
}
