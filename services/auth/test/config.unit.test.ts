import { describe, expect, it } from 'vitest';
import { ConfigError } from '@oan/config';
import { loadAuthConfig } from '../src/config.ts';

const base = { JWT_SECRET: 's'.repeat(32), ID_SECRET: 'i'.repeat(32) };

describe('the auth configuration', () => {
  it('has the documented defaults', () => {
    const c = loadAuthConfig(base);
    expect(c).toMatchObject({
      AUTH_PORT: 8181,
      SMTP_URL: 'smtp://127.0.0.1:2525',
      GOOGLE_ISSUER: 'https://accounts.google.com',
      JWT_TTL_SECONDS: 86_400,
      ENABLE_OPEN_API: false,
    });
    expect(c.OAN_TEST_LOGIN_CODES).toBeUndefined();
    expect(c.GOOGLE_JWKS_URL).toBeUndefined();
  });

  it('refuses to start without an ID_SECRET of 32+ characters, naming it', () => {
    expect(() => loadAuthConfig({ JWT_SECRET: base.JWT_SECRET })).toThrow(/ID_SECRET/);
    expect(() => loadAuthConfig({ ...base, ID_SECRET: 'short' })).toThrow(/ID_SECRET: must be at least 32/);
  });

  it('reads test login codes as normalized email → code', () => {
    const c = loadAuthConfig({ ...base, OAN_TEST_LOGIN_CODES: ' QA@Example.com=123456 , b@c.de=000000,' });
    expect([...c.OAN_TEST_LOGIN_CODES!]).toEqual([
      ['qa@example.com', '123456'],
      ['b@c.de', '000000'],
    ]);
  });

  it('refuses malformed test login codes', () => {
    for (const v of ['qa@example.com', 'not-an-email=1', 'qa@example.com=']) {
      expect(() => loadAuthConfig({ ...base, OAN_TEST_LOGIN_CODES: v })).toThrow(ConfigError);
    }
  });

  it('refuses test login codes in production', () => {
    expect(() =>
      loadAuthConfig({ ...base, NODE_ENV: 'production', OAN_TEST_LOGIN_CODES: 'qa@example.com=123456' }),
    ).toThrow(/OAN_TEST_LOGIN_CODES: must not be set in production/);
    expect(
      loadAuthConfig({ ...base, NODE_ENV: 'production', OAN_TEST_LOGIN_CODES: '' }).OAN_TEST_LOGIN_CODES,
    ).toBeUndefined();
  });

  it('treats empty optional variables as unset', () => {
    expect(
      loadAuthConfig({ ...base, GOOGLE_JWKS_URL: '', GOOGLE_CLIENT_ID: ' ' }).GOOGLE_CLIENT_ID,
    ).toBeUndefined();
  });
});
