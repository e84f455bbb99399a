import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { body } from '@oan/testing';
import { bearer, post, startAuthFleet, uniqueEmail, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet();
});
afterAll(async () => fleet?.close());

describe('the engine’s email join flow end to end', () => {
  it('works step by step, answers JSON everywhere, and never logs or records a secret', async () => {
    const email = uniqueEmail('join');
    const seen: Awaited<ReturnType<typeof post>>[] = [];
    const step = async (res: Awaited<ReturnType<typeof post>>) => {
      seen.push(res);
      return res;
    };

    expect((await step(await post(fleet.app, '/auth/oan/email/request-code', { email }))).statusCode).toBe(
      200,
    );
    const emailCode = await fleet.smtp.code(email);
    const verified = await step(
      await post(fleet.app, '/auth/oan/email/verify', { email, code: emailCode, platform: 'dsh' }),
    );
    const { user, token } = body<{ user: { id: string; sourcePlatform: string }; token: string }>(verified);
    expect(user.sourcePlatform).toBe('dsh');

    const created = await step(
      await fleet.app.inject({
        method: 'POST',
        url: '/api/v1/auth/oan/pairing-codes',
        headers: bearer(token),
      }),
    );
    const { code: pairingCode } = body<{ code: string }>(created);
    const redeemed = await step(
      await post(fleet.app, '/auth/oan/pairing-codes/redeem', { code: pairingCode }),
    );
    const { apiKey, userId } = body<{ apiKey: string; userId: string }>(redeemed);
    expect(userId).toBe(user.id);

    const listed = await step(
      await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(apiKey) }),
    );
    const [key] = body<{ id: string }[]>(listed);
    await step(await post(fleet.app, '/auth/oan/pairing-codes/redeem', { code: pairingCode }));
    const revoked = await step(
      await fleet.app.inject({
        method: 'DELETE',
        url: `/api/v1/api-keys/${key!.id}`,
        headers: bearer(apiKey),
      }),
    );
    expect(revoked.statusCode).toBe(204);
    await step(await fleet.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: bearer(apiKey) }));

    for (const res of seen) {
      if (res.statusCode === 204) expect(res.body).toBe('');
      else expect(() => JSON.parse(res.body) as unknown).not.toThrow();
    }
    expect(seen.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 401, 204, 401]);

    const logs = fleet.logs.join('\n');
    expect(fleet.logs.length).toBeGreaterThan(10);
    for (const secret of [apiKey, apiKey.slice(7), pairingCode, token]) expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(new RegExp(`(?<![0-9])${emailCode}(?![0-9])`));
  });
});
