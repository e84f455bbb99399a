import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  envelope,
  insertAccount,
  insertApiKey,
  insertEvent,
  jwtFor,
  openFleet,
  startGateway,
  type Fleet,
  type RunningGateway,
} from './helpers';

let fleet: Fleet;
let gw: RunningGateway;
let account: string;
let key: string;
const stored: string[] = [];

const get = (path: string, token = key) =>
  gw.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  fleet = await openFleet();
  gw = await startGateway(fleet);
  account = await insertAccount(fleet.orm);
  key = (await insertApiKey(fleet.orm, account)).key;
  for (let seq = 1; seq <= 260; seq++) stored.push(await insertEvent(fleet.orm, account, envelope(seq)));
});

afterAll(async () => {
  await gw?.close();
  await fleet?.close();
});

describe('GET /api/v1/events when the account has 260 events', () => {
  it('serves the stored texts byte for byte, ascending (§4.3, §12 line 31)', async () => {
    const res = await get('/api/v1/events?since=0&limit=10');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(`[${stored.slice(0, 10).join(',')}]`);
  });

  it('returns only seq > since (§12 line 23)', async () => {
    const items = (await get('/api/v1/events?since=255')).json<{ seq: string }[]>();
    expect(items.map((e) => e.seq)).toEqual(['256', '257', '258', '259', '260']);
  });

  it('defaults to since=0 and limit=50 (§12 line 26)', async () => {
    const items = (await get('/api/v1/events')).json<{ seq: string }[]>();
    expect(items).toHaveLength(50);
    expect(items[0]?.seq).toBe('1');
  });

  it('fills a page of 200 exactly when more exist (§12 lines 24-25)', async () => {
    const items = (await get('/api/v1/events?since=3&limit=200')).json<{ seq: string }[]>();
    expect(items).toHaveLength(200);
    expect(items[199]?.seq).toBe('203');
  });

  it('answers [] past the last seq, even past the bigint range', async () => {
    expect((await get('/api/v1/events?since=260')).body).toBe('[]');
    expect((await get('/api/v1/events?since=99999999999999999999999')).body).toBe('[]');
  });

  it('every item has the §8.1 shape (§12 line 30)', async () => {
    const items = (await get('/api/v1/events?limit=3')).json<Record<string, unknown>[]>();
    for (const e of items) {
      expect(e).toMatchObject({ v: 1, type: 'gofer_message', source: 'own_gofer' });
      expect(e.seq).toMatch(/^\d+$/);
      expect(typeof e.eventId).toBe('string');
      expect(typeof e.payload).toBe('object');
      expect(new Date(e.createdAt as string).toISOString()).toBe(e.createdAt);
    }
  });

  it.each([
    'limit=201',
    'limit=0',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'since=-1',
    'since=abc',
    'since=1e3',
  ])('rejects %s with 400 VALIDATION_ERROR (A16, A17)', async (query) => {
    const res = await get(`/api/v1/events?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.any(String) });
  });

  it('accepts an OAN JWT and refuses a gofers-realm JWT and an unknown key (§12 lines 14-15)', async () => {
    expect((await get('/api/v1/events?limit=1', await jwtFor(account))).statusCode).toBe(200);
    const realm = await get('/api/v1/events', await jwtFor(account, 'gofers'));
    expect(realm.statusCode).toBe(403);
    expect(realm.json()).toEqual({ error: 'errors.realmNotAllowed', code: 'FORBIDDEN' });
    const unknown = await get('/api/v1/events', 'gofers_deadbeef');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('never shows another account its events', async () => {
    const other = await insertAccount(fleet.orm);
    const otherKey = (await insertApiKey(fleet.orm, other)).key;
    expect((await get('/api/v1/events', otherKey)).body).toBe('[]');
  });
});

describe('GET /api/v1/events/cursor', () => {
  it('is the max seq as a string, "0" for a fresh account (§12 line 21)', async () => {
    expect((await get('/api/v1/events/cursor')).json()).toEqual({ seq: '260' });
    const fresh = await insertAccount(fleet.orm);
    expect((await get('/api/v1/events/cursor', await jwtFor(fresh))).json()).toEqual({ seq: '0' });
  });
});

describe('GET /api/v1/events/unresolved with no open items yet', () => {
  it('is an empty digest with numeric zeros (§12 line 27)', async () => {
    const res = await get('/api/v1/events/unresolved');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ events: [], summary: { pendingQuestions: 0, goferCount: 0, decisions: 0 } });
  });
});

describe('when ENABLE_OPEN_API is off', () => {
  it('has no OAN route (§0.5)', async () => {
    const off = await startGateway(fleet, { id: 'off', openApi: false, metrics: false });
    try {
      for (const path of ['/api/v1/events', '/api/v1/events/cursor', '/api/v1/events/unresolved']) {
        const res = await off.app.inject({
          method: 'GET',
          url: path,
          headers: { authorization: `Bearer ${key}` },
        });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
      }
      expect((await off.app.inject('/health')).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});
