import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { body } from '@oan/testing';
import { internalCallHeaders } from '@oan/auth';
import { join, JWT_SECRET, QA_CODE, QA_EMAIL, startAuthFleet, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
let closed: AuthFleet['app'];
beforeAll(async () => {
  fleet = await startAuthFleet();
  closed = await fleet.buildAnother({ ENABLE_OPEN_API: 'false' });
});
afterAll(async () => fleet?.close());

const ROUTES: [string, string, object?][] = [
  ['POST', '/api/v1/auth/oan/google', { idToken: 'x' }],
  ['POST', '/api/v1/auth/oan/email/request-code', { email: QA_EMAIL }],
  ['POST', '/api/v1/auth/oan/email/verify', { email: QA_EMAIL, code: QA_CODE }],
  ['POST', '/api/v1/auth/oan/pairing-codes'],
  ['POST', '/api/v1/auth/oan/pairing-codes/redeem', { code: '0123456789abcdef' }],
  ['GET', '/api/v1/api-keys'],
  ['DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000'],
];

describe('with ENABLE_OPEN_API off (no OAN route exists)', () => {
  it.each(ROUTES)('%s %s does not exist: 404 JSON', async (method, url, payload) => {
    const res = await closed.inject({
      method: method as 'GET',
      url,
      ...(payload ? { payload } : {}),
    });
    expect(res.statusCode).toBe(404);
    expect(body(res)).toEqual({ error: 'Not Found', code: 'NOT_FOUND' });
  });

  it('still serves health and the internal notice endpoint the gateway needs', async () => {
    expect((await closed.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const { user } = await join(fleet);
    const res = await closed.inject({
      method: 'POST',
      url: '/internal/connector-notices',
      headers: internalCallHeaders(JWT_SECRET),
      payload: {
        accountId: user.id,
        connector: '@openagentnetwork/dsh-plugin',
        installed: '0.1.4',
        latest: '0.1.5',
      },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('with ENABLE_OPEN_API on', () => {
  it('serves the routes under /api/v1, tolerates a doubled slash and not outside the prefix', async () => {
    expect(
      (
        await fleet.app.inject({
          method: 'POST',
          url: '//api/v1/auth/oan/email/verify',
          payload: { email: QA_EMAIL, code: QA_CODE },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await fleet.app.inject({
          method: 'POST',
          url: '/auth/oan/email/verify',
          payload: { email: QA_EMAIL, code: QA_CODE },
        })
      ).statusCode,
    ).toBe(404);
  });

  it('is ready when Postgres and Redis answer', async () => {
    const res = await fleet.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ checks: { postgres: 'ok', redis: 'ok' } });
  });
});
