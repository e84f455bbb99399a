import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@oan/db';
import {
  appliedPositionsMigration,
  oanExpectedMigration,
  oanExpectedPlacesMigration,
  recordApplied,
  recordExpected,
  WriteTracker,
} from '@oan/projection';
import {
  envelope,
  insertAccount,
  insertEvent,
  jwtFor,
  openFleet,
  startGateway,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';

/**
 * Read-your-writes on the gateway's routes: an account whose command returned sees its effects in
 * GET /events, /events/cursor and /events/unresolved, even while the projector is still applying
 * them. A command records its store position (WriteTracker, as the services do); the projector
 * records what it applied (`recordApplied`); the routes wait, bounded, for the caller's own.
 */
let fleet: Fleet;
let gw: RunningGateway;
let tracker: WriteTracker;
const BOUND_MS = 1500;

beforeAll(async () => {
  fleet = await openFleet();
  const setup = await openDatabase({
    url: fleet.url,
    schema: 'read',
    migrations: [appliedPositionsMigration, oanExpectedMigration, oanExpectedPlacesMigration],
  });
  await setup.close(true);
  gw = await startGateway(fleet, { ownWritesTimeoutMs: BOUND_MS });
  tracker = new WriteTracker(fleet.redis, fleet.prefix);
});

afterAll(async () => {
  const keys = await fleet?.redis.keys(`${fleet.prefix}rw*`);
  if (keys?.length) await fleet.redis.del(...keys);
  await gw?.close();
  await fleet?.close();
});

const get = async (url: string, accountId: string) =>
  gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await jwtFor(accountId)}` } });

/** Settles with the time it took, or stays pending (checked with a race). */
const timed = <T>(p: Promise<T>) => {
  const t0 = Date.now();
  return p.then((value) => ({ value, ms: Date.now() - t0 }));
};

describe('GET /events right after the caller’s own command', () => {
  for (const [route, read] of [
    ['/api/v1/events', (body: string) => (JSON.parse(body) as unknown[]).length],
    ['/api/v1/events/cursor', (body: string) => Number((JSON.parse(body) as { seq: string }).seq)],
  ] as const) {
    it(`${route} waits until the projector applied the caller's writes, then shows them`, async () => {
      const account = await insertAccount(fleet.orm);
      await insertEvent(fleet.orm, account, envelope(1));
      // The command stored matching position 7 for this account; the projector has applied 3.
      await recordApplied(fleet.orm.em.fork(), 'matching', new Map([[account, 3n]]));
      await tracker.remember(account, 'matching', 7n);

      const pending = timed(get(route, account));
      const early = await Promise.race([pending, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
      expect(early).toBe('waiting');

      // The projector applies position 7, with the envelope it produced for the caller.
      await insertEvent(fleet.orm, account, envelope(2));
      await recordApplied(fleet.orm.em.fork(), 'matching', new Map([[account, 7n]]));
      const { value: res, ms } = await pending;
      expect(res.statusCode).toBe(200);
      expect(read(res.body)).toBe(2);
      expect(ms).toBeLessThan(BOUND_MS);
    });
  }

  it('then waits for the envelopes stage 1 produced for the caller until stage 2 has written them', async () => {
    const account = await insertAccount(fleet.orm);
    await insertEvent(fleet.orm, account, envelope(1));
    await tracker.remember(account, 'gofers', 4n);
    // Stage 1 applied position 4 and produced the caller's envelope 2; stage 2 has not written it.
    const produced = envelope(2);
    await recordApplied(fleet.orm.em.fork(), 'gofers', new Map([[account, 4n]]));
    await recordExpected(fleet.orm.em.fork(), [{ accountId: account, eventId: produced.eventId }]);

    const pending = timed(get('/api/v1/events', account));
    const early = await Promise.race([pending, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
    expect(early).toBe('waiting');
    await insertEvent(fleet.orm, account, produced);
    const { value: res, ms } = await pending;
    expect((JSON.parse(res.body) as { seq: string }[]).map((e) => e.seq)).toEqual(['1', '2']);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('waits as well for writes the caller made under another account’s key (a thread keyed by side a, ADR 0012)', async () => {
    const sideA = await insertAccount(fleet.orm);
    const sideB = await insertAccount(fleet.orm);
    await recordApplied(fleet.orm.em.fork(), 'matching', new Map([[sideA, 3n]]));
    // B decided: the event is keyed by A's account.
    await tracker.rememberFor([sideB], sideA, 'matching', 7n);

    const pending = timed(get('/api/v1/events/unresolved', sideB));
    const early = await Promise.race([pending, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
    expect(early).toBe('waiting');
    await recordApplied(fleet.orm.em.fork(), 'matching', new Map([[sideA, 7n]]));
    const { value: res, ms } = await pending;
    expect(res.statusCode).toBe(200);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('an account without pending writes does not wait, and another account’s writes never hold it up', async () => {
    const writer = await insertAccount(fleet.orm);
    const reader = await insertAccount(fleet.orm);
    await tracker.remember(writer, 'gofers', 50n);
    const { value: res, ms } = await timed(get('/api/v1/events/unresolved', reader));
    expect(res.statusCode).toBe(200);
    expect(ms).toBeLessThan(300);
  });

  it('a projector that does not catch up within the bound costs the caller the bound, never an error', async () => {
    const account = await insertAccount(fleet.orm);
    await tracker.remember(account, 'conversations', 9n);
    const { value: res, ms } = await timed(get('/api/v1/events/unresolved', account));
    expect(res.statusCode).toBe(200);
    expect((JSON.parse(res.body) as { events: unknown[] }).events).toEqual([]);
    expect(ms).toBeGreaterThanOrEqual(BOUND_MS);
  });
});
