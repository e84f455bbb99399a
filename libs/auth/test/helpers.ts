import { randomBytes, randomUUID } from 'node:crypto';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { API_KEY_PERMISSIONS } from '@oan/protocol';
import { credentialsMigration, generateApiKey, hashApiKey } from '../src/index';

export const JWT_SECRET = 'lib-auth-test-secret-lib-auth-test-secret';

export interface TestDb {
  orm: MikroORM;
  url: string;
  close(): Promise<void>;
}

/** A fresh database per test file (dropped afterwards); the credential tables only. */
export async function openTestDb(): Promise<TestDb> {
  const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(6).toString('hex')}`;
  const orm = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
  return {
    orm,
    url,
    close: async () => {
      await orm.close(true);
      await dropDatabase(url);
    },
  };
}

export async function insertAccount(
  orm: MikroORM,
  opts: { realm?: string; banned?: boolean } = {},
): Promise<string> {
  const id = randomUUID();
  await sql(
    orm.em.fork(),
    `insert into auth.accounts (id, realm, email, source_platform, banned_at, created_at) values (?, ?, ?, 'other', ?, now())`,
    [id, opts.realm ?? 'oan', `${id}@example.test`, opts.banned ? new Date() : null],
  );
  return id;
}

export async function insertApiKey(
  orm: MikroORM,
  accountId: string,
  opts: { permissions?: string[]; expiresAt?: Date } = {},
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
