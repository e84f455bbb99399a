import { describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { InvalidJwtError, signOanJwt, verifyJwt } from '../src/index.ts';

const secret = 'unit-test-secret-unit-test-secret-0001';
const key = new TextEncoder().encode(secret);

describe('an OAN JWT', () => {
  it('carries sub, realm oan, iat and exp by default', async () => {
    const token = await signOanJwt(secret, { accountId: 'acc-1', ttlSeconds: 60 });
    const claims = await verifyJwt(secret, token);
    expect(claims.sub).toBe('acc-1');
    expect(claims.realm).toBe('oan');
    expect(claims.exp! - claims.iat!).toBe(60);
  });

  it('can be minted for another realm or without a realm claim', async () => {
    expect(
      (await verifyJwt(secret, await signOanJwt(secret, { accountId: 'a', realm: 'gofers', ttlSeconds: 60 })))
        .realm,
    ).toBe('gofers');
    const realmless = await verifyJwt(
      secret,
      await signOanJwt(secret, { accountId: 'a', realm: null, ttlSeconds: 60 }),
    );
    expect(realmless).not.toHaveProperty('realm', expect.anything());
  });
});

describe('verifyJwt refuses', () => {
  const refuses = async (token: string) =>
    expect(verifyJwt(secret, token)).rejects.toBeInstanceOf(InvalidJwtError);

  it('an expired token', async () => {
    await refuses(await signOanJwt(secret, { accountId: 'a', ttlSeconds: -10 }));
  });

  it('a token with alg none', async () => {
    await refuses(new UnsecuredJWT({ realm: 'oan' }).setSubject('a').setExpirationTime('1h').encode());
  });

  it('a token signed with another secret', async () => {
    await refuses(
      await signOanJwt('another-secret-another-secret-00000002', { accountId: 'a', ttlSeconds: 60 }),
    );
  });

  it('a token signed with HS512 under the same secret', async () => {
    const t = await new SignJWT({ realm: 'oan' })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject('a')
      .setExpirationTime('1h')
      .sign(key);
    await refuses(t);
  });

  it('an RS256 token', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    await refuses(
      await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256' })
        .setSubject('a')
        .setExpirationTime('1h')
        .sign(privateKey),
    );
  });

  it('a token without subject or expiry', async () => {
    await refuses(
      await new SignJWT({ realm: 'oan' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('1h')
        .sign(key),
    );
    await refuses(
      await new SignJWT({ realm: 'oan' }).setProtectedHeader({ alg: 'HS256' }).setSubject('a').sign(key),
    );
  });

  it('garbage', async () => {
    for (const t of ['', 'garbage', 'a.b.c', 'x'.repeat(5000)]) await refuses(t);
  });
});
