import client from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  commitAndPublish,
  envelope,
  insertAccount,
  insertApiKey,
  insertEvent,
  openFleet,
  startGateway,
  waitFor,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';

let fleet: Fleet;
let gw: RunningGateway;

beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet);
});

afterAll(async () => {
  await gw?.close();
  await fleet?.close();
});

async function newAccount(): Promise<{ account: string; key: string }> {
  const account = await insertAccount(fleet.orm);
  return { account, key: (await insertApiKey(fleet.orm, account)).key };
}

const poll = (key: string, query: string, signal?: AbortSignal) =>
  fetch(`${gw.url}/api/v1/events?${query}`, {
    headers: { authorization: `Bearer ${key}` },
    ...(signal ? { signal } : {}),
  });

const held = async () =>
  (await client.register.getSingleMetric('oan_gateway_long_polls_held')!.get()).values[0]?.value ?? 0;

describe('GET /api/v1/events?wait=N when events exist after since', () => {
  it('answers at once with the page', async () => {
    const { account, key } = await newAccount();
    const text = await insertEvent(fleet.orm, account, envelope(1));
    const started = Date.now();
    const res = await poll(key, 'since=0&wait=10');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`[${text}]`);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('GET /api/v1/events?wait=N when nothing is after since', () => {
  it('holds until an envelope for the account is published, then answers with it', async () => {
    const { account, key } = await newAccount();
    const other = await newAccount();
    const answer = poll(key, 'since=0&wait=20');
    await waitFor(async () => expect(await held()).toBe(1));
    // Another account's envelope wakes nobody here.
    await commitAndPublish(fleet, other.account, envelope(1));
    const text = await commitAndPublish(fleet, account, envelope(1));
    const published = Date.now();
    const res = await answer;
    expect(await res.text()).toBe(`[${text}]`);
    expect(Date.now() - published).toBeLessThan(1500);
    expect(await held()).toBe(0);
  });

  it('answers [] once the time is up', async () => {
    const { key } = await newAccount();
    const started = Date.now();
    const res = await poll(key, 'since=0&wait=1');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('[]');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('releases the hold when the client goes away', async () => {
    const { key } = await newAccount();
    const abort = new AbortController();
    const answer = poll(key, 'since=0&wait=30', abort.signal).catch((err: unknown) => err);
    await waitFor(async () => expect(await held()).toBe(1));
    abort.abort();
    await answer;
    await waitFor(async () => expect(await held()).toBe(0));
  });

  it('wait=0 and no wait answer at once, as in v1', async () => {
    const { key } = await newAccount();
    for (const q of ['since=0', 'since=0&wait=0']) {
      const res = await poll(key, q);
      expect(await res.text()).toBe('[]');
    }
  });
});

describe('GET /api/v1/events with a bad wait', () => {
  it.each(['31', '-1', '1.5', 'abc', ''])('wait=%s is the route’s 400 VALIDATION_ERROR', async (wait) => {
    const { key } = await newAccount();
    const res = await poll(key, `wait=${wait}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});

describe('GET /api/v1/events?wait=N past the per-account cap of held long-polls', () => {
  it('answers 429 RATE_LIMITED for one more, counted over every gateway, and frees a place when one ends', async () => {
    const env = { GATEWAY_MAX_LONG_POLLS_PER_ACCOUNT: '2' };
    const [g1, g2] = [await startGateway(fleet, { env }), await startGateway(fleet, { id: 'g2', env })];
    const at = (g: RunningGateway, key: string, query: string, signal?: AbortSignal) =>
      fetch(`${g.url}/api/v1/events?${query}`, {
        headers: { authorization: `Bearer ${key}` },
        ...(signal ? { signal } : {}),
      });
    try {
      const { key } = await newAccount();
      const other = await newAccount();
      const abort = new AbortController();
      const first = at(g1, key, 'since=0&wait=20', abort.signal).catch((err: unknown) => err);
      const second = at(g2, key, 'since=0&wait=20', abort.signal).catch((err: unknown) => err);
      await waitFor(async () => expect(await held()).toBe(2));

      const refused = await at(g1, key, 'since=0&wait=20');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toEqual({
        error: 'Too many long-polls held for this account',
        code: 'RATE_LIMITED',
      });
      // Answers at once are not held, and another account has its own places.
      expect((await at(g2, key, 'since=0&wait=0')).status).toBe(200);
      const theirs = await at(g2, other.key, 'since=0&wait=1');
      expect(theirs.status).toBe(200);

      abort.abort();
      await Promise.all([first, second]);
      await waitFor(async () => expect(await held()).toBe(0));
      const again = await at(g1, key, 'since=0&wait=1');
      expect(again.status).toBe(200);
      expect(await again.text()).toBe('[]');
    } finally {
      await g1.close();
      await g2.close();
    }
  });
});
