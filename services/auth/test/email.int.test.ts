import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeJwt } from 'jose';
import { sql } from '@oan/db';
import { accountIdForEmail, sha256Hex } from '../src/infra/ids.ts';
import { body, expectError } from '@oan/testing';
import {
  ID_SECRET,
  post,
  QA_CODE,
  QA_EMAIL,
  signInByEmail,
  startAuthFleet,
  uniqueEmail,
  type AuthFleet,
} from './helpers.ts';

let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet();
});
afterAll(async () => fleet?.close());

const requestCode = (email: unknown) => post(fleet.app, '/auth/oan/email/request-code', { email });
const verify = (payload: object) => post(fleet.app, '/auth/oan/email/verify', payload);
const INVALID_CODE = { error: 'Unauthorized: invalid or expired code', code: 'UNAUTHORIZED' };

describe('requesting a code', () => {
  it('answers {success:true} and mails a 6-digit code whose hash alone is kept in Redis', async () => {
    const email = uniqueEmail();
    const res = await requestCode(email);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({ success: true });
    const code = await fleet.smtp.code(email);
    expect(code).toMatch(/^\d{6}$/);
    const mail = fleet.smtp.messages.find((m) => m.to.includes(email))!;
    expect(mail.raw).toMatch(/Subject: Your OAN sign-in code/);
    const key = `${fleet.prefix}email-code:${email}`;
    expect(await fleet.redis.hgetall(key)).toEqual({ h: sha256Hex(code), a: '0' });
    const ttl = await fleet.redis.ttl(key);
    expect(ttl).toBeGreaterThan(290);
    expect(ttl).toBeLessThanOrEqual(300);
  });

  it('normalizes the email: case and surrounding spaces do not matter', async () => {
    const email = uniqueEmail();
    expect((await requestCode(`  ${email.toUpperCase()} `)).statusCode).toBe(200);
    const code = await fleet.smtp.code(email);
    expect((await verify({ email, code })).statusCode).toBe(200);
  });

  it('a second time within 60 s is refused with 429 RATE_LIMITED and mails nothing', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    expectError(await requestCode(email), 429, { code: 'RATE_LIMITED' });
    expect(fleet.smtp.mailsTo(email)).toBe(1);
  });

  it('for a disposable domain is refused with errors.disposableEmailNotAllowed', async () => {
    const res = await requestCode(`someone-${Date.now()}@mailinator.com`);
    expectError(res, 400, { error: 'errors.disposableEmailNotAllowed', code: 'VALIDATION_ERROR' });
  });

  it('for a malformed email is refused with 400 VALIDATION_ERROR', async () => {
    for (const email of ['not-an-email', 'a@', '@b.c', '', 42, null]) {
      expectError(await requestCode(email), 400, { code: 'VALIDATION_ERROR' });
    }
  });
});

describe('verifying a mailed code', () => {
  it('signs up: {user, token} with a realm-oan JWT for the deterministic account', async () => {
    const email = uniqueEmail();
    const { user, token } = await signInByEmail(fleet, email);
    expect(user).toEqual({
      id: accountIdForEmail(ID_SECRET, email),
      email,
      sourcePlatform: 'other',
      createdAt: expect.any(String),
    });
    expect(new Date(user.createdAt).toISOString()).toBe(user.createdAt);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: user.id, realm: 'oan' });
    expect(claims.exp! - claims.iat!).toBe(86_400);
  });

  it('a second time with the same code is refused with 401', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    const code = await fleet.smtp.code(email);
    expect((await verify({ email, code })).statusCode).toBe(200);
    expectError(await verify({ email, code }), 401, INVALID_CODE);
  });

  it('twice concurrently succeeds exactly once', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    const code = await fleet.smtp.code(email);
    const answers = await Promise.all(Array.from({ length: 8 }, () => verify({ email, code })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
  });

  it('with a wrong code is refused with 401, and the right code still works', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    const code = await fleet.smtp.code(email);
    const wrong = code === '000000' ? '000001' : '000000';
    expectError(await verify({ email, code: wrong }), 401, INVALID_CODE);
    expect((await verify({ email, code })).statusCode).toBe(200);
  });

  it('after five wrong attempts is refused: the code is burnt', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    const code = await fleet.smtp.code(email);
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) expectError(await verify({ email, code: wrong }), 401, INVALID_CODE);
    expect(await fleet.redis.exists(`${fleet.prefix}email-code:${email}`)).toBe(0);
    expectError(await verify({ email, code }), 401, INVALID_CODE);
  });

  it('once the code expired is refused with 401', async () => {
    const email = uniqueEmail();
    await requestCode(email);
    const code = await fleet.smtp.code(email);
    const key = `${fleet.prefix}email-code:${email}`;
    await fleet.redis.pexpire(key, 1);
    await vi.waitFor(async () => expect(await fleet.redis.exists(key)).toBe(0));
    expectError(await verify({ email, code }), 401, INVALID_CODE);
  });

  it('for an email that never asked for one is refused with 401', async () => {
    expectError(await verify({ email: uniqueEmail(), code: '123456' }), 401, INVALID_CODE);
  });
});

describe('the registration platform', () => {
  it('is stored as given when known, and "foo" becomes "other"', async () => {
    expect((await signInByEmail(fleet, uniqueEmail(), 'dsh')).user.sourcePlatform).toBe('dsh');
    expect((await signInByEmail(fleet, uniqueEmail(), 'foo')).user.sourcePlatform).toBe('other');
    expect((await signInByEmail(fleet, uniqueEmail(), 7)).user.sourcePlatform).toBe('other');
  });

  it('changes nothing on a login of an existing account', async () => {
    const email = uniqueEmail();
    const first = await signInByEmail(fleet, email, 'hermes');
    await fleet.redis.del(`${fleet.prefix}email-cooldown:${email}`);
    const again = await signInByEmail(fleet, email, 'dsh');
    expect(again.user).toEqual(first.user);
    const events = await sql(fleet.orm.em.fork(), 'select type from auth.events where stream_id = ?', [
      `account-${first.user.id}`,
    ]);
    expect(events).toEqual([{ type: 'AccountRegistered' }]);
  });
});

describe('a test login account (OAN_TEST_LOGIN_CODES)', () => {
  it('requests a code without any mail and verifies with its fixed code, again and again', async () => {
    const before = fleet.smtp.messages.length;
    for (let i = 0; i < 3; i++) {
      const asked = await requestCode(QA_EMAIL);
      expect(asked.statusCode).toBe(200);
      expect(body(asked)).toEqual({ success: true });
    }
    expect(fleet.smtp.messages.length).toBe(before);
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await verify({ email: QA_EMAIL, code: QA_CODE });
      expect(res.statusCode).toBe(200);
      ids.add(body<{ user: { id: string } }>(res).user.id);
    }
    expect(ids).toEqual(new Set([accountIdForEmail(ID_SECRET, QA_EMAIL)]));
  });

  it('still refuses a wrong code', async () => {
    expectError(await verify({ email: QA_EMAIL, code: '000000' }), 401, INVALID_CODE);
  });

  it('registers one account when its first logins race', async () => {
    const email = uniqueEmail('race');
    const racing = await fleet.buildAnother({ OAN_TEST_LOGIN_CODES: `${email}=111111` });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        racing.inject({
          method: 'POST',
          url: '/api/v1/auth/oan/email/verify',
          payload: { email, code: '111111' },
        }),
      ),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((r) => r.json<{ user: { id: string } }>().user.id)).size).toBe(1);
    const rows = await sql(
      fleet.orm.em.fork(),
      `select count(*)::int as n from auth.events where stream_id = ?`,
      [`account-${accountIdForEmail(ID_SECRET, email)}`],
    );
    expect(rows).toEqual([{ n: 1 }]);
  });
});

describe('when the mail cannot be sent', () => {
  it('answers 503 with the error body and leaves no usable code nor cooldown', async () => {
    const broken = await fleet.buildAnother({ SMTP_URL: 'smtp://127.0.0.1:1' });
    const email = uniqueEmail();
    const res = await broken.inject({
      method: 'POST',
      url: '/api/v1/auth/oan/email/request-code',
      payload: { email },
    });
    expectError(res, 503, { code: 'SERVICE_UNAVAILABLE', error: /try again/ });
    expect(
      await fleet.redis.exists(
        `${fleet.prefix}email-code:${email}`,
        `${fleet.prefix}email-cooldown:${email}`,
      ),
    ).toBe(0);
    expect((await requestCode(email)).statusCode).toBe(200);
  });
});
