import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsecuredJWT } from 'jose';
import { createHttpApp } from '@oan/http';
import { sql } from '@oan/db';
import {
  createAuthenticator,
  requireAuth,
  signOanJwt,
  type AuthMode,
  type Authenticator,
} from '../src/index.ts';
import { insertAccount, insertApiKey, JWT_SECRET, openTestDb, type TestDb } from './helpers.ts';

const MODES: AuthMode[] = ['multi+realm', 'jwt-strict', 'multi-open'];
const UNAUTHORIZED = { status: 401, code: 'UNAUTHORIZED' };
const REALM = { status: 403, body: { error: 'errors.realmNotAllowed', code: 'FORBIDDEN' } };
const BANNED = { status: 403, body: { error: 'Forbidden: account banned', code: 'FORBIDDEN' } };
const OK = { status: 200 };
type Expect = { status: number; code?: string; body?: object };

let db: TestDb;
let authenticator: Authenticator;
let app: Awaited<ReturnType<typeof createHttpApp>>;
const headers: Record<string, Record<string, string>> = {};

/** credential kind → expected answer per mode: a key on a JWT-only route is 401, a refusal says Unauthorized/Forbidden, a banned account is 403. */
const matrix: Record<string, [Expect, Expect, Expect]> = {
  none: [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'malformed header': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  garbage: [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'expired JWT': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'alg none JWT': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'JWT signed with another secret': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'JWT of an unknown account': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'JWT with realm gofers': [REALM, REALM, OK],
  'JWT without realm': [REALM, REALM, OK],
  'OAN JWT': [OK, OK, OK],
  'API key': [OK, UNAUTHORIZED, OK],
  'unknown API key': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'revoked API key': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'expired API key': [UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED],
  'JWT of a banned account': [BANNED, BANNED, BANNED],
  'API key of a banned account': [BANNED, UNAUTHORIZED, BANNED],
};

beforeAll(async () => {
  db = await openTestDb();
  authenticator = createAuthenticator({ orm: db.orm, jwtSecret: JWT_SECRET });
  const account = await insertAccount(db.orm);
  const banned = await insertAccount(db.orm, { banned: true });
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const jwt = (accountId: string, extra: { realm?: string | null; ttlSeconds?: number } = {}) =>
    signOanJwt(JWT_SECRET, { accountId, ttlSeconds: 600, ...extra });
  const revoked = await insertApiKey(db.orm, account);
  await sql(db.orm.em.fork(), 'delete from auth.api_keys where id = ?', [revoked.id]);

  headers['none'] = {};
  headers['malformed header'] = { authorization: `Basic ${await jwt(account)}` };
  headers['garbage'] = bearer('garbage');
  headers['expired JWT'] = bearer(await jwt(account, { ttlSeconds: -5 }));
  headers['alg none JWT'] = bearer(
    new UnsecuredJWT({ realm: 'oan' }).setSubject(account).setExpirationTime('1h').encode(),
  );
  headers['JWT signed with another secret'] = bearer(
    await signOanJwt('some-other-secret-some-other-secret-000', { accountId: account, ttlSeconds: 600 }),
  );
  headers['JWT of an unknown account'] = bearer(await jwt('no-such-account'));
  headers['JWT with realm gofers'] = bearer(await jwt(account, { realm: 'gofers' }));
  headers['JWT without realm'] = bearer(await jwt(account, { realm: null }));
  headers['OAN JWT'] = bearer(await jwt(account));
  headers['API key'] = bearer((await insertApiKey(db.orm, account)).key);
  headers['unknown API key'] = bearer('gofers_deadbeef');
  headers['revoked API key'] = bearer(revoked.key);
  headers['expired API key'] = bearer(
    (await insertApiKey(db.orm, account, { expiresAt: new Date(Date.now() - 1000) })).key,
  );
  headers['JWT of a banned account'] = bearer(await jwt(banned));
  headers['API key of a banned account'] = bearer((await insertApiKey(db.orm, banned)).key);
  headers['API key without thread:read'] = bearer(
    (await insertApiKey(db.orm, account, { permissions: ['role:read'] })).key,
  );

  app = await createHttpApp({ name: 'auth-hooks-test', logLevel: 'silent', metrics: false });
  for (const mode of MODES) {
    app.get(`/${mode}`, { preHandler: requireAuth(authenticator, { mode }) }, async (req) => req.principal);
    app.get(
      `/${mode}/thread-read`,
      { preHandler: requireAuth(authenticator, { mode, permission: 'thread:read' }) },
      async () => ({
        ok: true,
      }),
    );
  }
});

afterAll(async () => {
  await app?.close();
  await authenticator?.drain();
  await db?.close();
});

describe.each(Object.entries(matrix))('with %s', (kind, expected) => {
  it.each(MODES.map((mode, i) => [mode, expected[i]!] as const))('mode %s answers %o', async (mode, want) => {
    const res = await app.inject({ method: 'GET', url: `/${mode}`, headers: headers[kind] });
    expect(res.statusCode).toBe(want.status);
    const body = res.json();
    if (want.body) expect(body).toEqual(want.body);
    if (want.code) expect(body).toEqual({ error: expect.stringContaining('Unauthorized'), code: want.code });
    if (want.status === 200) expect(body.accountId).toEqual(expect.any(String));
  });
});

describe('a route that needs thread:read', () => {
  it('refuses an API key without it with 403 FORBIDDEN', async () => {
    for (const mode of ['multi+realm', 'multi-open']) {
      const res = await app.inject({
        method: 'GET',
        url: `/${mode}/thread-read`,
        headers: headers['API key without thread:read'],
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: expect.stringContaining('Forbidden'), code: 'FORBIDDEN' });
    }
  });

  it('accepts a key with every permission and a JWT', async () => {
    for (const kind of ['API key', 'OAN JWT']) {
      const res = await app.inject({
        method: 'GET',
        url: '/multi+realm/thread-read',
        headers: headers[kind],
      });
      expect(res.statusCode).toBe(200);
    }
  });
});

describe('the principal a route sees', () => {
  it('names the API key and its permissions, or the JWT realm', async () => {
    const viaKey = (
      await app.inject({ method: 'GET', url: '/multi+realm', headers: headers['API key'] })
    ).json();
    expect(viaKey).toMatchObject({ via: 'apiKey', apiKeyId: expect.any(String), banned: false });
    expect(viaKey.permissions).toHaveLength(10);
    const viaJwt = (
      await app.inject({ method: 'GET', url: '/multi-open', headers: headers['JWT without realm'] })
    ).json();
    expect(viaJwt).toMatchObject({ via: 'jwt', realm: 'gofers', banned: false });
  });
});
