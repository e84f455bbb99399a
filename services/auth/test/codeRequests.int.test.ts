import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '@oan/testing';
import { startAuthFleet, uniqueEmail, type AuthFleet } from './helpers.ts';

/** `request-code` mails: capped per client address and for the whole deployment (2 and 3 here). */
let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet({
    AUTH_MAX_CODE_REQUESTS_PER_ADDRESS: '2',
    AUTH_MAX_CODE_REQUESTS: '3',
    AUTH_CODE_REQUESTS_WINDOW_SECONDS: '600',
  });
});
afterAll(async () => {
  await fleet?.close();
});

const request = (client: string, email = uniqueEmail('mailed')) =>
  fleet.app.inject({
    method: 'POST',
    url: '/api/v1/auth/oan/email/request-code',
    payload: { email },
    headers: { 'x-forwarded-for': client },
    remoteAddress: '127.0.0.1',
  });

describe('request-code mails per window', () => {
  it('refuses a third address from one client, then any address once the deployment’s cap is spent', async () => {
    expect((await request('203.0.113.30')).statusCode).toBe(200);
    expect((await request('203.0.113.30')).statusCode).toBe(200);
    const email = uniqueEmail('unsent');
    expectError(await request('203.0.113.30', email), 429, {
      code: 'RATE_LIMITED',
      error: /^Too many code requests/,
    });
    expect(fleet.smtp.mailsTo(email)).toBe(0);
    // Another client gets the deployment's last one, and then nobody gets more.
    expect((await request('203.0.113.31')).statusCode).toBe(200);
    expectError(await request('203.0.113.32'), 429, { code: 'RATE_LIMITED' });
  });
});
