import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, postJson, TestFleet } from '@oan/testing';

let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start({ enableOpenApi: false });
});
afterAll(async () => {
  await fleet?.stop();
});

describe('when ENABLE_OPEN_API is off', () => {
  it('every OAN route is 404 with the error body', async () => {
    for (const [method, path] of [
      ['POST', '/auth/oan/email/request-code'],
      ['POST', '/auth/oan/email/verify'],
      ['POST', '/auth/oan/google'],
      ['POST', '/auth/oan/pairing-codes'],
      ['POST', '/auth/oan/pairing-codes/redeem'],
      ['GET', '/api-keys'],
      ['DELETE', '/api-keys/x'],
      ['GET', '/events'],
      ['GET', '/events/cursor'],
      ['GET', '/events/unresolved'],
      ['GET', '/gofers'],
    ] as const) {
      const res =
        method === 'POST'
          ? await postJson(fleet.url, path, { email: 'a@b.co' })
          : await fetch(`${fleet.url}/api/v1${path}`, { method }).then(async (r) => ({
              status: r.status,
              body: await r.json(),
            }));
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('the /oan namespace answers "Invalid namespace"', async () => {
    await expect(openSocket(fleet.url, 'gofers_whatever')).rejects.toThrow('Invalid namespace');
  });

  it('the health probe still answers', async () => {
    expect((await fetch(`${fleet.url}/api/health`)).status).toBe(200);
  });
});
