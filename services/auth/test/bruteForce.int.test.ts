import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { body, expectError } from '@oan/testing';
import {
  bearer,
  QA_CODE,
  QA_EMAIL,
  signInByEmail,
  startAuthFleet,
  uniqueEmail,
  type AuthFleet,
} from './helpers.ts';

/** Codes cannot be guessed from one client address. The limit is 3 here (default 30). */
let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet({
    AUTH_MAX_FAILED_ATTEMPTS: '3',
    AUTH_FAILED_ATTEMPTS_WINDOW_SECONDS: '600',
    AUTH_MAX_FAILED_PER_EMAIL: '8',
    AUTH_EMAIL_FAILED_WINDOW_SECONDS: '3600',
  });
});
afterAll(async () => {
  await fleet?.close();
});

/** A request as the edge forwards it: from loopback, with the client's address appended. */
const from = (client: string, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  fleet.app.inject({
    method: 'POST',
    url: `/api/v1${url}`,
    payload: payload as object,
    headers: { 'x-forwarded-for': client, ...headers },
    remoteAddress: '127.0.0.1',
  });

describe('failed code attempts per client address', () => {
  it('refuses an address after 3 wrong pairing codes with 429, before the code is looked at', async () => {
    const { token } = await signInByEmail(fleet);
    const issued = body<{ code: string }>(
      await fleet.app.inject({
        method: 'POST',
        url: '/api/v1/auth/oan/pairing-codes',
        headers: bearer(token),
      }),
    );
    for (let i = 0; i < 3; i++) {
      expectError(
        await from('203.0.113.10', '/auth/oan/pairing-codes/redeem', { code: `00000000000000${i}0` }),
        401,
        { code: 'UNAUTHORIZED' },
      );
    }
    // Even the right code is refused from that address now, and stays unused.
    const blocked = await from('203.0.113.10', '/auth/oan/pairing-codes/redeem', { code: issued.code });
    expectError(blocked, 429, { code: 'RATE_LIMITED', error: /^Too many failed attempts/ });
    // Another client behind the same edge is not affected, and the code still works for it.
    const ok = await from('203.0.113.11', '/auth/oan/pairing-codes/redeem', { code: issued.code });
    expect(ok.statusCode).toBe(200);
  });

  it('counts wrong email codes the same way, and successes not at all', async () => {
    const email = uniqueEmail();
    expect((await from('203.0.113.20', '/auth/oan/email/request-code', { email })).statusCode).toBe(200);
    const code = await fleet.smtp.code(email, fleet.smtp.mailsTo(email));
    // Successful logins (QA bypass) from the address count nothing.
    for (let i = 0; i < 5; i++) {
      const qa = await from('203.0.113.20', '/auth/oan/email/verify', { email: QA_EMAIL, code: QA_CODE });
      expect(qa.statusCode).toBe(200);
    }
    for (let i = 0; i < 3; i++) {
      expectError(await from('203.0.113.20', '/auth/oan/email/verify', { email, code: '000000' }), 401, {
        code: 'UNAUTHORIZED',
      });
    }
    expectError(await from('203.0.113.20', '/auth/oan/email/verify', { email, code }), 429, {
      code: 'RATE_LIMITED',
    });
  });

  it('believes X-Forwarded-For only from the edge’s networks: a remote client cannot pose as another', async () => {
    const direct = (xff: string) =>
      fleet.app.inject({
        method: 'POST',
        url: '/api/v1/auth/oan/pairing-codes/redeem',
        payload: { code: 'ffffffffffffffff' },
        headers: { 'x-forwarded-for': xff },
        remoteAddress: '198.51.100.7',
      });
    for (let i = 0; i < 3; i++) expect((await direct(`192.0.2.${i}`)).statusCode).toBe(401);
    expectError(await direct('192.0.2.99'), 429, { code: 'RATE_LIMITED' });
  });

  it('believes X-Forwarded-For from loopback only: another private host is keyed by its own address', async () => {
    const neighbour = (xff: string) =>
      fleet.app.inject({
        method: 'POST',
        url: '/api/v1/auth/oan/pairing-codes/redeem',
        payload: { code: 'ffffffffffffffff' },
        headers: { 'x-forwarded-for': xff },
        remoteAddress: '10.20.30.40',
      });
    for (let i = 0; i < 3; i++) expect((await neighbour(`192.0.2.${10 + i}`)).statusCode).toBe(401);
    expectError(await neighbour('192.0.2.77'), 429, { code: 'RATE_LIMITED' });
  });

  it('keys an IPv6 client by its /64: the next address of the same network is refused too', async () => {
    for (let i = 1; i <= 3; i++) {
      const res = await from(`2001:db8:7:8::${i}`, '/auth/oan/pairing-codes/redeem', {
        code: 'ffffffffffffffff',
      });
      expect(res.statusCode).toBe(401);
    }
    const next = await from('2001:db8:7:8:ffff:1:2:3', '/auth/oan/pairing-codes/redeem', {
      code: 'ffffffffffffffff',
    });
    expectError(next, 429, { code: 'RATE_LIMITED' });
    // Another /64 is another client.
    const other = await from('2001:db8:7:9::1', '/auth/oan/pairing-codes/redeem', {
      code: 'ffffffffffffffff',
    });
    expect(other.statusCode).toBe(401);
  });
});

describe('failed email codes per email, across codes', () => {
  it('a new code does not reset the count: past the limit even the right code is a 429', async () => {
    const email = uniqueEmail('guessed');
    let n = 0;
    // Every guess from another address, so the per-address limit (3) never applies.
    const guess = (code: string) => from(`100.64.1.${++n}`, '/auth/oan/email/verify', { email, code });
    const newCode = async () => {
      await fleet.redis.del(`${fleet.prefix}email-cooldown:${email}`);
      expect((await from('198.51.100.200', '/auth/oan/email/request-code', { email })).statusCode).toBe(200);
      return fleet.smtp.code(email, fleet.smtp.mailsTo(email));
    };
    await newCode();
    for (let i = 0; i < 5; i++) expect((await guess('000000')).statusCode).toBe(401); // burns the code
    const second = await newCode();
    for (let i = 0; i < 3; i++) expect((await guess('000000')).statusCode).toBe(401); // 8 in all
    expectError(await guess(second), 429, {
      code: 'RATE_LIMITED',
      error: /^Too many failed attempts for this email/,
    });
    // Another email is not affected.
    const other = await from('100.64.2.1', '/auth/oan/email/verify', {
      email: uniqueEmail(),
      code: '111111',
    });
    expect(other.statusCode).toBe(401);
  });
});
