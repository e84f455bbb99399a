import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOanJwt } from '@oan/auth';
import { sql } from '@oan/db';
import { pairingCodeHash } from '../src/infra/ids.ts';
import { body, expectError } from '@oan/testing';
import { bearer, join, JWT_SECRET, post, signInByEmail, startAuthFleet, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
let token: string;
let userId: string;
beforeAll(async () => {
  fleet = await startAuthFleet();
  ({
    token,
    user: { id: userId },
  } = await signInByEmail(fleet));
});
afterAll(async () => fleet?.close());

const INVALID = { error: 'errors.invalidPairingCode', code: 'UNAUTHORIZED' };
const create = (headers: Record<string, string>, payload?: string) =>
  fleet.app.inject({
    method: 'POST',
    url: '/api/v1/auth/oan/pairing-codes',
    headers,
    ...(payload === undefined ? {} : { payload }),
  });
const redeem = (code: unknown) => post(fleet.app, '/auth/oan/pairing-codes/redeem', { code });
const newCode = async () => body<{ code: string }>(await create(bearer(token))).code;

describe('creating a pairing code with an OAN JWT', () => {
  it('works with no body and no Content-Type: 200 {code: 16 hex, expiresAt ≈ now + 10 min}', async () => {
    const res = await create(bearer(token));
    expect(res.statusCode).toBe(200);
    const { code, expiresAt } = body<{ code: string; expiresAt: string }>(res);
    expect(code).toMatch(/^[0-9a-f]{16}$/);
    expect(new Date(expiresAt).toISOString()).toBe(expiresAt);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(9.9 * 60_000);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
  });

  it('works with {} and a JSON content type, and with a JSON content type and no body', async () => {
    expect((await create({ ...bearer(token), 'content-type': 'application/json' }, '{}')).statusCode).toBe(
      200,
    );
    expect((await create({ ...bearer(token), 'content-type': 'application/json' }, '')).statusCode).toBe(200);
  });

  it('records only the code hash, for the caller, in the code stream', async () => {
    const code = await newCode();
    const events = await sql<{ stream_id: string; account_id: string; data: Record<string, unknown> }>(
      fleet.orm.em.fork(),
      `select stream_id, account_id, data from auth.events where type = 'PairingCodeIssued' and stream_id = ?`,
      [`pairing-code-${pairingCodeHash(code)}`],
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.account_id).toBe(userId);
    expect(events[0]!.data).toMatchObject({ codeHash: pairingCodeHash(code), accountId: userId });
    expect(JSON.stringify(events)).not.toContain(code);
  });
});

describe('creating a pairing code without an OAN JWT', () => {
  it('is refused for a gofers_ API key with 401', async () => {
    const { apiKey } = await join(fleet);
    expectError(await create(bearer(apiKey)), 401, { error: /Unauthorized/, code: 'UNAUTHORIZED' });
  });

  it('is refused for a JWT of realm gofers or without realm with 403 errors.realmNotAllowed', async () => {
    for (const realm of ['gofers', null]) {
      const jwt = await signOanJwt(JWT_SECRET, { accountId: userId, realm, ttlSeconds: 60 });
      expectError(await create(bearer(jwt)), 403, { error: 'errors.realmNotAllowed', code: 'FORBIDDEN' });
    }
  });

  it('is refused without a header, with garbage, or with an expired JWT: 401 Unauthorized', async () => {
    const expired = await signOanJwt(JWT_SECRET, { accountId: userId, ttlSeconds: -1 });
    for (const headers of [{}, bearer('garbage'), bearer(expired), { authorization: token }]) {
      expectError(await create(headers), 401, { error: /Unauthorized/, code: 'UNAUTHORIZED' });
    }
  });
});

describe('redeeming an issued pairing code', () => {
  it('answers {apiKey: gofers_…, userId} for the account that created it', async () => {
    const res = await redeem(await newCode());
    expect(res.statusCode).toBe(200);
    const { apiKey, userId: redeemedFor } = body<{ apiKey: string; userId: string }>(res);
    expect(apiKey).toMatch(/^gofers_[A-Za-z0-9_-]{43}$/);
    expect(redeemedFor).toBe(userId);
    const keys = await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(apiKey) });
    expect(keys.statusCode).toBe(200);
  });

  it('accepts the code in upper case or with stray spaces', async () => {
    const code = await newCode();
    expect((await redeem(` ${code.toUpperCase()} `)).statusCode).toBe(200);
  });

  it('appends PairingCodeRedeemed and ApiKeyIssued with hashes only, never the key or the code', async () => {
    const code = await newCode();
    const { apiKey } = body<{ apiKey: string }>(await redeem(code));
    const events = await sql<{ type: string; stream_id: string; stream_version: number; data: unknown }>(
      fleet.orm.em.fork(),
      `select type, stream_id, stream_version, data from auth.events
        where data->>'pairingCodeHash' = ? or (stream_id = ? and type = 'PairingCodeRedeemed') order by position`,
      [pairingCodeHash(code), `pairing-code-${pairingCodeHash(code)}`],
    );
    expect(events.map((e) => [e.type, e.stream_id.split('-')[0]])).toEqual([
      ['PairingCodeRedeemed', 'pairing'],
      ['ApiKeyIssued', 'account'],
    ]);
    expect(events[0]!.stream_version).toBe(2);
    const all = JSON.stringify(await sql(fleet.orm.em.fork(), 'select * from auth.events'));
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain(apiKey.slice('gofers_'.length));
    expect(all).not.toContain(code);
  });
});

describe('redeeming a code that is not redeemable', () => {
  it('answers the same 401 errors.invalidPairingCode when used, expired or unknown', async () => {
    const used = await newCode();
    expect((await redeem(used)).statusCode).toBe(200);
    const usedAgain = await redeem(used);
    const unknown = await redeem('0123456789abcdef');
    const expiring = await newCode();
    fleet.advanceClock(10 * 60_000 + 1);
    const expired = await redeem(expiring);
    fleet.advanceClock(-(10 * 60_000 + 1));
    for (const res of [usedAgain, unknown, expired]) expectError(res, 401, INVALID);
    expect(new Set([usedAgain.body, unknown.body, expired.body]).size).toBe(1);
  });

  it('is a 400 VALIDATION_ERROR without a code', async () => {
    expectError(await post(fleet.app, '/auth/oan/pairing-codes/redeem', {}), 400, {
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('when 20 redeems of one code race', () => {
  it('exactly one gets a key and nineteen get the identical 401', async () => {
    const code = await newCode();
    const before = await fleet.eventCount();
    const answers = await Promise.all(Array.from({ length: 20 }, () => redeem(code)));
    const ok = answers.filter((r) => r.statusCode === 200);
    const refused = answers.filter((r) => r.statusCode !== 200);
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) expectError(r, 401, INVALID);
    expect(new Set(refused.map((r) => r.body)).size).toBe(1);
    expect(await fleet.eventCount()).toBe(before + 2);
    const keys = await sql<{ n: number }>(
      fleet.orm.em.fork(),
      `select count(*)::int as n from auth.api_keys where account_id = ? and name like 'connector (redeemed %'`,
      [userId],
    );
    const listed = body<unknown[]>(
      await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(token) }),
    );
    expect(listed).toHaveLength(keys[0]!.n);
  });
});
