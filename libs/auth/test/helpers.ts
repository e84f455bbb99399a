import { randomBytes } from 'node:crypto';
import { dropDatabase, openDatabase, type MikroORM } from '@oan/db';
import { credentialsMigration } from '../src/index.ts';

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

export { insertAccount, insertApiKey } from '@oan/testing';
