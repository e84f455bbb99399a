import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body } from '@oan/testing';
import { banAccount } from '../src/commands/accountAdmin.ts';
import { accountCommands, type AuthContext } from '../src/commands/context.ts';
import { accountIdForEmail, accountStream } from '../src/infra/ids.ts';
import { createAuthStore } from '../src/infra/store.ts';
import { ID_SECRET, post, signInByEmail, startAuthFleet, uniqueEmail, type AuthFleet } from './helpers.ts';
import { legacyAccountIdForEmail } from './legacyIds.ts';

let fleet: AuthFleet;
let ctx: AuthContext;
beforeAll(async () => {
  fleet = await startAuthFleet();
  ctx = { orm: fleet.orm, store: createAuthStore(), now: () => new Date() };
});
afterAll(async () => fleet?.close());

/** Registers `email` as the service did before ids were keyed: the same command, on the UUIDv5 id. */
async function registerAsBefore(email: string): Promise<string> {
  const accountId = legacyAccountIdForEmail(email);
  await accountCommands(ctx)(accountStream(accountId), {
    type: 'SignIn',
    data: { accountId, email, googleSub: null, platform: 'dsh', method: 'email' },
  });
  return accountId;
}

const streamsOf = async (email: string) =>
  (
    await sql<{ stream_id: string }>(
      fleet.orm.em.fork(),
      `select distinct stream_id from auth.events where data->>'email' = ? order by stream_id`,
      [email],
    )
  ).map((r) => r.stream_id);

describe('an account registered before ids were keyed', () => {
  it('is found by its email: the returning user signs in to it, not to a new account', async () => {
    const email = uniqueEmail('legacy');
    const legacyId = await registerAsBefore(email);
    const { user } = await signInByEmail(fleet, email.toUpperCase());
    expect(user).toMatchObject({ id: legacyId, email, sourcePlatform: 'dsh' });
    expect(user.id).not.toBe(accountIdForEmail(ID_SECRET, email));
    // Still the one account: no second stream, no second AccountRegistered.
    expect(await streamsOf(email)).toEqual([accountStream(legacyId)]);
  });

  it('is the account an operator bans by its email', async () => {
    const email = uniqueEmail('legacy-ban');
    const legacyId = await registerAsBefore(email);
    expect(await banAccount(ctx, email)).toEqual({ accountId: legacyId, banned: true });
  });
});

describe('a new account', () => {
  it('gets the id keyed by ID_SECRET, and keeps it when the secret changes', async () => {
    const email = uniqueEmail('keyed');
    const { user } = await signInByEmail(fleet, email);
    expect(user.id).toBe(accountIdForEmail(ID_SECRET, email));
    expect(user.id).not.toBe(legacyAccountIdForEmail(email));
    // A deployment that rotates ID_SECRET still finds its accounts by email.
    const rotated = await fleet.buildAnother({
      ID_SECRET: 'a-rotated-id-secret-a-rotated-id-secret',
      OAN_TEST_LOGIN_CODES: `${email}=135790`,
    });
    const again = await post(rotated, '/auth/oan/email/verify', { email, code: '135790' });
    expect(again.statusCode).toBe(200);
    expect(body<{ user: { id: string } }>(again).user.id).toBe(user.id);
    expect(await streamsOf(email)).toEqual([accountStream(user.id)]);
  });
});
