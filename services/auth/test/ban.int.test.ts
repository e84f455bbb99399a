import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body, expectError } from '@oan/testing';
import { bearer, join, post, startAuthFleet, type AuthFleet } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet();
});
afterAll(async () => fleet?.close());

/** `npm run ban -- <target>` as an operator runs it (the script is `node services/auth/src/cli/ban.ts`). */
async function ban(target: string): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['services/auth/src/cli/ban.ts', target],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: fleet.config.DATABASE_URL } },
    );
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

const BANNED = { error: 'Forbidden: account banned', code: 'FORBIDDEN' };
const bannedEvents = async (accountId: string) =>
  (
    await sql<{ n: number }>(
      fleet.orm.em.fork(),
      `select count(*)::int as n from auth.events where stream_id = ? and type = 'AccountBanned'`,
      [`account-${accountId}`],
    )
  )[0]!.n;

describe('banning an account with the operator CLI', () => {
  it('by email prints the account id, records AccountBanned once and sets banned_at; a second ban records nothing', async () => {
    const { user, email } = await join(fleet);
    const first = await ban(email.toUpperCase());
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(user.id);
    expect(await bannedEvents(user.id)).toBe(1);
    const [row] = await sql<{ banned: boolean }>(
      fleet.orm.em.fork(),
      'select banned_at is not null as banned from auth.accounts where id = ?',
      [user.id],
    );
    expect(row!.banned).toBe(true);
    const second = await ban(user.id);
    expect(second.code).toBe(0);
    expect(second.stdout.trim()).toBe(user.id);
    expect(await bannedEvents(user.id)).toBe(1);
  });

  it('of an unknown account fails with exit code 1 and records nothing', async () => {
    const before = await fleet.eventCount();
    const res = await ban('nobody-at-all@oan-test.dev');
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(await fleet.eventCount()).toBe(before);
  });
});

describe('a banned account', () => {
  it('is refused everywhere it authenticates, signs in, or redeems an outstanding code', async () => {
    const { user, email, token, apiKey } = await join(fleet);
    const outstanding = body<{ code: string }>(
      await post(fleet.app, '/auth/oan/pairing-codes', undefined, bearer(token)),
    ).code;
    expect((await ban(user.id)).code).toBe(0);

    for (const credential of [apiKey, token]) {
      expectError(
        await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(credential) }),
        403,
        BANNED,
      );
    }
    expectError(await post(fleet.app, '/auth/oan/pairing-codes', undefined, bearer(token)), 403, BANNED);
    expectError(await post(fleet.app, '/auth/oan/pairing-codes/redeem', { code: outstanding }), 403, BANNED);
    await fleet.redis.del(`${fleet.prefix}email-cooldown:${email}`);
    await post(fleet.app, '/auth/oan/email/request-code', { email });
    const code = await fleet.smtp.code(email, 2);
    expectError(await post(fleet.app, '/auth/oan/email/verify', { email, code }), 403, BANNED);
  });
});
