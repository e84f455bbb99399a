import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { signOanJwt } from '@oan/auth';
import { sql } from '@oan/db';
import { banAccount } from '../src/commands/accountAdmin.ts';
import { createAuthStore } from '../src/infra/store.ts';
import { body, expectError } from '@oan/testing';
import { bearer, join, JWT_SECRET, startAuthFleet, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet();
});
afterAll(async () => fleet?.close());

type KeyItem = {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
};
const list = (headers: Record<string, string>) =>
  fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers });
const revoke = (id: string, headers: Record<string, string>, app = fleet.app) =>
  app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${encodeURIComponent(id)}`, headers });
const keysOf = async (headers: Record<string, string>) => body<KeyItem[]>(await list(headers));
const FORBIDDEN = { error: 'Forbidden', code: 'FORBIDDEN' };

describe('listing API keys', () => {
  it('shows the caller’s keys as {id, name, createdAt, expiresAt: null, lastUsedAt} and no key material', async () => {
    const { token, apiKey, user } = await join(fleet);
    const items = await keysOf(bearer(token));
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(Object.keys(item!).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name']);
    expect(item).toMatchObject({ expiresAt: null, lastUsedAt: null });
    expect(item!.name).toMatch(/^connector \(redeemed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\)$/);
    expect(new Date(item!.createdAt).toISOString()).toBe(item!.createdAt);
    const raw = JSON.stringify(items);
    expect(raw).not.toContain(apiKey.slice(7));
    const [row] = await sql<{ key_hash: string }>(
      fleet.orm.em.fork(),
      'select key_hash from auth.api_keys where account_id = ?',
      [user.id],
    );
    expect(raw).not.toContain(row!.key_hash);
  });

  it('with the key itself, records its last use', async () => {
    const { apiKey } = await join(fleet);
    await keysOf(bearer(apiKey));
    await vi.waitFor(async () => {
      const [item] = await keysOf(bearer(apiKey));
      expect(item!.lastUsedAt).toMatch(/Z$/);
    });
  });

  it('never shows another account’s keys', async () => {
    const a = await join(fleet);
    const b = await join(fleet);
    const idsA = (await keysOf(bearer(a.token))).map((k) => k.id);
    const idsB = (await keysOf(bearer(b.apiKey))).map((k) => k.id);
    expect(idsA).toHaveLength(1);
    expect(idsA).not.toContain(idsB[0]);
  });

  it('refuses an unknown key with 401 and a non-OAN JWT with 403 errors.realmNotAllowed', async () => {
    expectError(await list(bearer('gofers_deadbeef')), 401, { error: /Unauthorized/, code: 'UNAUTHORIZED' });
    const { user } = await join(fleet);
    for (const realm of ['gofers', null]) {
      const jwt = await signOanJwt(JWT_SECRET, { accountId: user.id, realm, ttlSeconds: 60 });
      expectError(await list(bearer(jwt)), 403, { error: 'errors.realmNotAllowed', code: 'FORBIDDEN' });
    }
  });
});

describe('revoking an API key', () => {
  it('answers 204 with an empty body, after which the key gets 401', async () => {
    const { token, apiKey } = await join(fleet);
    const [item] = await keysOf(bearer(token));
    const res = await revoke(item!.id, bearer(token));
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectError(await list(bearer(apiKey)), 401, { error: /Unauthorized/, code: 'UNAUTHORIZED' });
    expect(await keysOf(bearer(token))).toEqual([]);
  });

  it('lets a key revoke itself', async () => {
    const { apiKey } = await join(fleet);
    const [item] = await keysOf(bearer(apiKey));
    expect((await revoke(item!.id, bearer(apiKey))).statusCode).toBe(204);
    expectError(await list(bearer(apiKey)), 401, { code: 'UNAUTHORIZED' });
  });

  it('then tells the gateways on the push stream: t=revoke a=<account> k=<key id>', async () => {
    const { token, user } = await join(fleet);
    const [item] = await keysOf(bearer(token));
    expect((await revoke(item!.id, bearer(token))).statusCode).toBe(204);
    const entries = await fleet.redis.xrange(`${fleet.prefix}push`, '-', '+');
    expect(entries.map(([, fields]) => fields)).toContainEqual(['t', 'revoke', 'a', user.id, 'k', item!.id]);
  });

  it('still answers 204 when Redis is unreachable, and the revocation stands', async () => {
    const dead = new Redis({
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    const app = await fleet.buildAnother({}, { redis: dead });
    const { token, apiKey } = await join(fleet);
    const [item] = await keysOf(bearer(token));
    const res = await revoke(item!.id, bearer(token), app);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectError(await list(bearer(apiKey)), 401, { code: 'UNAUTHORIZED' });
    expect(fleet.logs.some((l) => l.includes('revocation committed but the push stream entry failed'))).toBe(
      true,
    );
    dead.disconnect();
  });

  it('answers the byte-identical 403 for an unknown, a malformed, an already revoked and another account’s id', async () => {
    const mine = await join(fleet);
    const theirs = await join(fleet);
    const [their] = await keysOf(bearer(theirs.token));
    const [own] = await keysOf(bearer(mine.token));
    expect((await revoke(own!.id, bearer(mine.token))).statusCode).toBe(204);
    const answers = await Promise.all(
      ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 'constructor', own!.id, their!.id].map((id) =>
        revoke(id, bearer(mine.token)),
      ),
    );
    for (const res of answers) expectError(res, 403, FORBIDDEN);
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    expect(await keysOf(bearer(theirs.token))).toHaveLength(1);
  });
});

describe('a banned account', () => {
  it('gets 403 Forbidden: account banned on GET /api-keys with its key or its JWT', async () => {
    const { token, apiKey, user } = await join(fleet);
    await banAccount({ orm: fleet.orm, store: createAuthStore(), now: () => new Date() }, user.id);
    for (const credential of [apiKey, token]) {
      expectError(await list(bearer(credential)), 403, {
        error: 'Forbidden: account banned',
        code: 'FORBIDDEN',
      });
    }
  });
});
