import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, type CryptoKey } from 'jose';
import { accountIdForEmail } from '../src/infra/ids.ts';
import { body, expectError } from '@oan/testing';
import { ID_SECRET, signInByEmail, startAuthFleet, uniqueEmail, type AuthFleet } from './helpers.ts';

const CLIENT_ID = 'oan-test.apps.googleusercontent.com';
let fleet: AuthFleet;
let jwks: Server;
let google: AuthFleet['app'];
let privateKey: CryptoKey;
let otherKey: CryptoKey;

beforeAll(async () => {
  const signing = await generateKeyPair('RS256');
  privateKey = signing.privateKey;
  otherKey = (await generateKeyPair('RS256')).privateKey;
  const publicKey = signing.publicKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/certs`;
  fleet = await startAuthFleet();
  google = await fleet.buildAnother({ GOOGLE_JWKS_URL: url, GOOGLE_CLIENT_ID: CLIENT_ID });
});

afterAll(async () => {
  await fleet?.close();
  await new Promise((resolve) => jwks?.close(resolve));
});

const idToken = (
  claims: Record<string, unknown>,
  opts: { key?: CryptoKey; aud?: string; iss?: string; exp?: string } = {},
) =>
  new SignJWT({ email_verified: true, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(opts.iss ?? 'https://accounts.google.com')
    .setAudience(opts.aud ?? CLIENT_ID)
    .setSubject('google-sub-1')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '5m')
    .sign(opts.key ?? privateKey);

const login = (app: AuthFleet['app'], payload: unknown) =>
  app.inject({ method: 'POST', url: '/api/v1/auth/oan/google', payload: payload as object });

describe('Google sign-in when it is configured', () => {
  it('registers the verified email’s account with the platform of the call and mints an OAN JWT', async () => {
    const email = uniqueEmail('g');
    const res = await login(google, { idToken: await idToken({ email }), platform: 'openclaw' });
    expect(res.statusCode).toBe(200);
    const { user, token } = body<{ user: Record<string, string>; token: string }>(res);
    expect(user).toEqual({
      id: accountIdForEmail(ID_SECRET, email),
      email,
      sourcePlatform: 'openclaw',
      createdAt: expect.any(String),
    });
    expect(decodeJwt(token)).toMatchObject({ sub: user.id, realm: 'oan' });
  });

  it('signs in the same account as the email path for the same email (either issuer form)', async () => {
    const email = uniqueEmail('g');
    const viaEmail = await signInByEmail(fleet, email, 'dsh');
    const res = await login(google, {
      idToken: await idToken({ email: email.toUpperCase() }, { iss: 'accounts.google.com' }),
      platform: 'hermes',
    });
    expect(res.statusCode).toBe(200);
    expect(body<{ user: unknown }>(res).user).toEqual(viaEmail.user);
  });

  it('refuses a token for another audience, signed by another key, expired, or with an unverified email: 401', async () => {
    const email = uniqueEmail('g');
    const tokens = [
      await idToken({ email }, { aud: 'someone-else' }),
      await idToken({ email }, { key: otherKey }),
      await idToken({ email }, { exp: '-1m' }),
      await idToken({ email }, { iss: 'https://evil.example' }),
      await idToken({ email, email_verified: false }),
      await idToken({}),
      'not-a-jwt',
    ];
    for (const t of tokens) {
      expectError(await login(google, { idToken: t }), 401, { error: /Unauthorized/, code: 'UNAUTHORIZED' });
    }
  });

  it('checks the token’s nonce when the client sent one (the web page does); a connector may send none', async () => {
    const email = uniqueEmail('g');
    const withNonce = await idToken({ email, nonce: 'n-4f2a' });
    const before = await fleet.eventCount();
    for (const [token, nonce] of [
      [withNonce, 'n-other'],
      [await idToken({ email }), 'n-4f2a'],
    ] as const) {
      expectError(await login(google, { idToken: token, nonce }), 401, {
        error: /Unauthorized/,
        code: 'UNAUTHORIZED',
      });
    }
    expect(await fleet.eventCount()).toBe(before);
    expect((await login(google, { idToken: withNonce, nonce: 'n-4f2a' })).statusCode).toBe(200);
    // The spec's connector flow has no nonce: without one the token is checked as before.
    expect((await login(google, { idToken: withNonce })).statusCode).toBe(200);
    for (const nonce of ['', 42, 'x'.repeat(257)])
      expectError(await login(google, { idToken: withNonce, nonce }), 400, { code: 'VALIDATION_ERROR' });
  });

  it('answers 400 VALIDATION_ERROR without an idToken', async () => {
    for (const payload of [{}, { idToken: '' }, { idToken: 42 }]) {
      expectError(await login(google, payload), 400, { code: 'VALIDATION_ERROR' });
    }
  });
});

describe('Google sign-in when it is not configured', () => {
  it('answers 400 VALIDATION_ERROR and records nothing', async () => {
    const before = await fleet.eventCount();
    expectError(await login(fleet.app, { idToken: await idToken({ email: uniqueEmail('g') }) }), 400, {
      code: 'VALIDATION_ERROR',
      error: /not configured/,
    });
    expect(await fleet.eventCount()).toBe(before);
  });
});
