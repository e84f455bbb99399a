import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAccount, TestFleet, type JoinedAccount } from '@oan/testing';

/** Visible limits through the edge, on a fleet with RATE_LIMIT_PER_MINUTE set. */
let fleet: TestFleet;
let acc: JoinedAccount;
const LIMIT = 12;

beforeAll(async () => {
  fleet = await TestFleet.start({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  acc = await joinAccount(fleet.url, fleet.mailbox, `limits-${fleet.id}@example.com`);
});
afterAll(async () => {
  await fleet?.stop();
});

const call = (method: string, path: string, token?: string, body?: unknown) =>
  fetch(`${fleet.url}/api/v1${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('an account with RATE_LIMIT_PER_MINUTE set', () => {
  it('sees its window on every answer of every service, counting down, then a 429 with Retry-After', async () => {
    // The join used one authenticated request (pairing-codes, with the JWT); the API key shares the count.
    const first = await call('GET', '/limits', acc.apiKey);
    const used = ((await first.json()) as { rateLimit: { used: number } }).rateLimit.used;
    expect(first.headers.get('ratelimit-limit')).toBe(String(LIMIT));

    // Unauthenticated requests are answered as in v1 and charged to nobody.
    for (let i = 0; i < LIMIT; i++) {
      const res = await call('GET', '/gofers');
      expect(res.status).toBe(401);
      expect(res.headers.get('ratelimit-remaining')).toBeNull();
    }

    const remaining: number[] = [];
    const answers = [
      await call('POST', '/gofers', acc.apiKey, { locale: 'en' }),
      await call('GET', '/gofers', acc.apiKey),
      await call('GET', '/events/cursor', acc.jwt),
      await call('GET', '/threads', acc.apiKey),
    ];
    for (const res of answers) {
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([0, 1, 2, 3].map((i) => LIMIT - used - 1 - i));

    let last: Response | undefined;
    for (let i = 0; i < LIMIT; i++) {
      last = await call('GET', '/events/cursor', acc.apiKey);
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(await last!.json()).toEqual({ error: expect.any(String), code: 'RATE_LIMITED' });
    const retryAfter = Number(last!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });
});
