import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { body } from '@oan/testing';
import { internalCallHeaders } from '@oan/auth';
import { bearer, join, JWT_SECRET, startAuthFleet, uniqueEmail, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
let token: string;
let accountId: string;
let apiKey: string;
let pendingEmail: string;

beforeAll(async () => {
  fleet = await startAuthFleet();
  ({
    token,
    apiKey,
    user: { id: accountId },
  } = await join(fleet));
  pendingEmail = uniqueEmail('pending');
  await fleet.app.inject({
    method: 'POST',
    url: '/api/v1/auth/oan/email/request-code',
    payload: { email: pendingEmail },
  });
});
afterAll(async () => fleet?.close());

const JSON_CT = { 'content-type': 'application/json' };
const big = JSON.stringify({
  email: `${'a'.repeat(20_000)}@example.com`,
  code: '1',
  idToken: 'x'.repeat(20_000),
});

/** Raw payloads that are not acceptable input for any of these endpoints. */
const common: [string, string | undefined, Record<string, string>][] = [
  ['no body', undefined, {}],
  ['an empty JSON body', '', JSON_CT],
  ['garbage JSON', '{"email": ', JSON_CT],
  ['a JSON array', '[]', JSON_CT],
  ['a JSON string', '"hello"', JSON_CT],
  ['a JSON null', 'null', JSON_CT],
  ['an empty object', '{}', JSON_CT],
  ['a body over the limit', big, JSON_CT],
  ['a text/plain body', 'email=a@b.c', { 'content-type': 'text/plain' }],
  ['a form body', 'email=a%40b.c', { 'content-type': 'application/x-www-form-urlencoded' }],
];

const perEndpoint: Record<string, { url: string; cases: [string, unknown][] }> = {
  'request-code': {
    url: '/auth/oan/email/request-code',
    cases: [
      ['a numeric email', { email: 123 }],
      ['an array email', { email: ['a@b.c'] }],
      ['a NUL byte in the email', { email: 'a\u0000b@example.com' }],
      ['a malformed email', { email: 'nobody' }],
    ],
  },
  verify: {
    url: '/auth/oan/email/verify',
    cases: [
      ['a missing code', { email: 'a@example.com' }],
      ['a missing email', { code: '123456' }],
      ['a numeric code', { email: 'x@example.com', code: 123456 }],
      ['an empty code', { email: 'x@example.com', code: '' }],
      ['a NUL byte in the code', { email: 'x@example.com', code: '12\u00003456' }],
      ['an object email', { email: { a: 1 }, code: '123456' }],
    ],
  },
  google: {
    url: '/auth/oan/google',
    cases: [
      ['a numeric idToken', { idToken: 1 }],
      ['an empty idToken', { idToken: '' }],
      ['a NUL byte in the idToken', { idToken: 'a\u0000b' }],
    ],
  },
  redeem: {
    url: '/auth/oan/pairing-codes/redeem',
    cases: [
      ['a numeric code', { code: 1234 }],
      ['an empty code', { code: '' }],
      ['a NUL byte in the code', { code: '0123\u0000' }],
      ['a null code', { code: null }],
    ],
  },
};

async function sideEffects() {
  const keys = (await fleet.redis.keys(`${fleet.prefix}*`)).sort();
  const attempts = await fleet.redis.hget(`${fleet.prefix}email-code:${pendingEmail}`, 'a');
  return { events: await fleet.eventCount(), keys, attempts, mails: fleet.smtp.messages.length };
}

function expectRefusal(res: Awaited<ReturnType<AuthFleet['app']['inject']>>) {
  expect(res.statusCode).toBeGreaterThanOrEqual(400);
  expect(res.statusCode).toBeLessThan(500);
  const b = body<Record<string, unknown>>(res);
  expect(Object.keys(b).sort()).toEqual(['code', 'error']);
  expect(typeof b['error']).toBe('string');
  expect(typeof b['code']).toBe('string');
}

describe.each(Object.entries(perEndpoint))('POST %s with bad input', (_name, { url, cases }) => {
  it.each([...common, ...cases.map(([label, p]) => [label, JSON.stringify(p), JSON_CT] as const)])(
    'refuses %s with a 4xx {error, code} and changes nothing',
    async (_label, payload, headers) => {
      const before = await sideEffects();
      const res = await fleet.app.inject({
        method: 'POST',
        url: `/api/v1${url}`,
        headers,
        ...(payload === undefined ? {} : { payload }),
      });
      expectRefusal(res);
      expect(await sideEffects()).toEqual(before);
    },
  );
});

describe('POST /auth/oan/pairing-codes with a valid JWT but a broken body', () => {
  it.each([
    ['garbage JSON', '{"a":', JSON_CT],
    ['a body over the limit', big, JSON_CT],
    ['an unsupported content type', '<x/>', { 'content-type': 'application/xml' }],
  ] as const)('refuses %s and issues no code', async (_label, payload, headers) => {
    const before = await sideEffects();
    expectRefusal(
      await fleet.app.inject({
        method: 'POST',
        url: '/api/v1/auth/oan/pairing-codes',
        payload,
        headers: { ...headers, ...bearer(token) },
      }),
    );
    expect(await sideEffects()).toEqual(before);
  });
});

describe('DELETE /api-keys/:apiKeyId with a broken body', () => {
  it('refuses garbage JSON and revokes nothing', async () => {
    const [item] = body<{ id: string }[]>(
      await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(token) }),
    );
    const before = await sideEffects();
    expectRefusal(
      await fleet.app.inject({
        method: 'DELETE',
        url: `/api/v1/api-keys/${item!.id}`,
        payload: '{x',
        headers: { ...JSON_CT, ...bearer(apiKey) },
      }),
    );
    expect(await sideEffects()).toEqual(before);
  });
});

describe('POST /internal/connector-notices with bad input', () => {
  const valid = () => ({
    accountId,
    connector: '@openagentnetwork/dsh-plugin',
    installed: '0.1.4',
    latest: '0.1.5',
  });
  it.each([
    ['a missing accountId', { ...valid(), accountId: undefined }],
    ['a numeric version', { ...valid(), installed: 14 }],
    ['a name outside the allowed alphabet', { ...valid(), connector: 'dsh plugin' }],
    ['an installed version that is not older', { ...valid(), installed: '0.1.5-beta.1' }],
    ['an unparsable version', { ...valid(), latest: 'latest' }],
    ['a NUL byte', { ...valid(), accountId: 'a\u0000' }],
  ])('refuses %s with 400 and records nothing', async (_label, payload) => {
    const before = await sideEffects();
    const res = await fleet.app.inject({
      method: 'POST',
      url: '/internal/connector-notices',
      headers: internalCallHeaders(JWT_SECRET),
      payload,
    });
    expectRefusal(res);
    expect(res.statusCode).toBe(400);
    expect(await sideEffects()).toEqual(before);
  });
});
