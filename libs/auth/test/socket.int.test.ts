import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from '@oan/db';
import {
  authenticateSocketToken,
  createAuthenticator,
  signOanJwt,
  type Authenticator,
} from '../src/index.ts';
import { insertAccount, insertApiKey, JWT_SECRET, openTestDb, type TestDb } from './helpers.ts';

let db: TestDb;
let authenticator: Authenticator;
let accountId: string;

beforeAll(async () => {
  db = await openTestDb();
  authenticator = createAuthenticator({ orm: db.orm, jwtSecret: JWT_SECRET });
  accountId = await insertAccount(db.orm);
});

afterAll(async () => {
  await authenticator?.drain();
  await db?.close();
});

const jwt = (id: string, realm?: string | null) =>
  signOanJwt(JWT_SECRET, { accountId: id, realm, ttlSeconds: 600 });
const rejects = (token: unknown, message: string) =>
  expect(authenticateSocketToken(authenticator, token)).rejects.toThrow(new Error(message));

describe('a /oan handshake', () => {
  it('without a token is refused as an invalid token', async () => {
    await rejects(undefined, 'Unauthorized: invalid token');
    await rejects('', 'Unauthorized: invalid token');
    await rejects(42, 'Unauthorized: invalid token');
  });

  it('with a garbage or foreign-secret JWT is refused as an invalid token', async () => {
    await rejects('garbage', 'Unauthorized: invalid token');
    await rejects(
      await signOanJwt('x'.repeat(40), { accountId, ttlSeconds: 60 }),
      'Unauthorized: invalid token',
    );
  });

  it('with an unknown or revoked API key is refused as an invalid API key', async () => {
    await rejects('gofers_deadbeef', 'Unauthorized: invalid API key');
    const { key, id } = await insertApiKey(db.orm, accountId);
    await expect(authenticateSocketToken(authenticator, key)).resolves.toMatchObject({
      via: 'apiKey',
      apiKeyId: id,
    });
    await sql(db.orm.em.fork(), 'delete from auth.api_keys where id = ?', [id]);
    await rejects(key, 'Unauthorized: invalid API key');
  });

  it('with a JWT of realm gofers, without realm, or of a gofers-realm account is refused as realm not allowed', async () => {
    await rejects(await jwt(accountId, 'gofers'), 'Unauthorized: realm not allowed');
    await rejects(await jwt(accountId, null), 'Unauthorized: realm not allowed');
    const mobile = await insertAccount(db.orm, { realm: 'gofers' });
    await rejects(await jwt(mobile), 'Unauthorized: realm not allowed');
  });

  it('of a banned account is refused with either credential', async () => {
    const banned = await insertAccount(db.orm, { banned: true });
    await rejects(await jwt(banned), 'Forbidden: account banned');
    await rejects((await insertApiKey(db.orm, banned)).key, 'Forbidden: account banned');
  });

  it('with an OAN JWT yields the account', async () => {
    await expect(authenticateSocketToken(authenticator, await jwt(accountId))).resolves.toEqual({
      accountId,
      via: 'jwt',
      realm: 'oan',
      expiresAt: expect.any(Number),
      banned: false,
      sourcePlatform: expect.any(String),
    });
  });
});

describe('when an API key is used', () => {
  const lastUsed = async (id: string) =>
    (
      await sql<{ t: number | null }>(
        db.orm.em.fork(),
        'select (extract(epoch from last_used_at) * 1000)::float8 as t from auth.api_keys where id = ?',
        [id],
      )
    )[0]!.t;

  it('records last_used_at in the background, at most once a minute', async () => {
    const { key, id } = await insertApiKey(db.orm, accountId);
    expect(await lastUsed(id)).toBeNull();
    await authenticator.authenticate(key);
    await vi.waitFor(async () => expect(await lastUsed(id)).not.toBeNull());
    const first = (await lastUsed(id))!;
    for (let i = 0; i < 5; i++) await authenticator.authenticate(key);
    await authenticator.drain();
    expect((await lastUsed(id))!).toBe(first);
  });

  it('records it again once the previous use is over a minute old', async () => {
    const { key, id } = await insertApiKey(db.orm, accountId);
    await sql(
      db.orm.em.fork(),
      `update auth.api_keys set last_used_at = now() - interval '2 minutes' where id = ?`,
      [id],
    );
    const before = (await lastUsed(id))!;
    await authenticator.authenticate(key);
    await authenticator.drain();
    expect((await lastUsed(id))!).toBeGreaterThan(before + 60_000);
  });
});
