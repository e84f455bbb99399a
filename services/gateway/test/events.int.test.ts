import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, sql } from '@oan/db';
import { readModelMigrations as projectorMigrations } from '@oan/readmodels';
import { openQuestions } from '../src/http/openQuestions.ts';
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
} from './helpers.ts';

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
  it('serves the stored texts byte for byte, ascending', async () => {
    const res = await get('/api/v1/events?since=0&limit=10');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(`[${stored.slice(0, 10).join(',')}]`);
  });

  it('returns only seq > since', async () => {
    const items = (await get('/api/v1/events?since=255')).json<{ seq: string }[]>();
    expect(items.map((e) => e.seq)).toEqual(['256', '257', '258', '259', '260']);
  });

  it('defaults to since=0 and limit=50', async () => {
    const items = (await get('/api/v1/events')).json<{ seq: string }[]>();
    expect(items).toHaveLength(50);
    expect(items[0]?.seq).toBe('1');
  });

  it('fills a page of 200 exactly when more exist', async () => {
    const items = (await get('/api/v1/events?since=3&limit=200')).json<{ seq: string }[]>();
    expect(items).toHaveLength(200);
    expect(items[199]?.seq).toBe('203');
  });

  it('answers [] past the last seq, even past the bigint range', async () => {
    expect((await get('/api/v1/events?since=260')).body).toBe('[]');
    expect((await get('/api/v1/events?since=99999999999999999999999')).body).toBe('[]');
  });

  it('every item has the wire envelope shape', async () => {
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
  ])('rejects %s with 400 VALIDATION_ERROR, never a silent fallback', async (query) => {
    const res = await get(`/api/v1/events?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.any(String) });
  });

  it('accepts an OAN JWT and refuses a gofers-realm JWT and an unknown key', async () => {
    expect((await get('/api/v1/events?limit=1', await jwtFor(account))).statusCode).toBe(200);
    const realm = await get('/api/v1/events', await jwtFor(account, 'gofers'));
    expect(realm.statusCode).toBe(403);
    expect(realm.json()).toEqual({ error: 'errors.realmNotAllowed', code: 'FORBIDDEN' });
    const unknown = await get('/api/v1/events', 'gofers_deadbeef');
    expect(unknown.statusCode).toBe(401);
    // The connector supervisor stops retrying only on a text containing "Unauthorized".
    expect(unknown.json()).toEqual({ error: expect.stringContaining('Unauthorized'), code: 'UNAUTHORIZED' });
    for (const path of ['/api/v1/events/cursor', '/api/v1/events/unresolved']) {
      const res = await get(path, 'gofers_deadbeef');
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: expect.stringContaining('Unauthorized'), code: 'UNAUTHORIZED' });
    }
  });

  it('never shows another account its events', async () => {
    const other = await insertAccount(fleet.orm);
    const otherKey = (await insertApiKey(fleet.orm, other)).key;
    expect((await get('/api/v1/events', otherKey)).body).toBe('[]');
  });
});

describe('GET /api/v1/events/cursor', () => {
  it('is the max seq as a string, "0" for a fresh account', async () => {
    expect((await get('/api/v1/events/cursor')).json()).toEqual({ seq: '260' });
    const fresh = await insertAccount(fleet.orm);
    expect((await get('/api/v1/events/cursor', await jwtFor(fresh))).json()).toEqual({ seq: '0' });
  });
});

describe('GET /api/v1/events/unresolved with no open items yet', () => {
  it('is an empty digest with numeric zeros', async () => {
    const res = await get('/api/v1/events/unresolved');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ events: [], summary: { pendingQuestions: 0, goferCount: 0, decisions: 0 } });
  });
});

describe('GET /api/v1/events/unresolved with open gofer_questions', () => {
  let questions: RunningGateway;
  beforeAll(async () => {
    // The projector owns read.gofers and read.gofer_messages; created here to set up state directly.
    const setup = await openDatabase({
      url: fleet.url,
      schema: 'projector',
      migrations: projectorMigrations,
    });
    await setup.close(true);
    questions = await startGateway(fleet, { id: 'q1', openItems: [openQuestions], metrics: false });
  });
  afterAll(async () => questions?.close());

  const at = (s: number) => new Date(Date.UTC(2026, 1, 1, 0, 0, s)).toISOString();
  async function gofer(accountId: string, deleted = false): Promise<string> {
    const id = randomUUID();
    await sql(
      fleet.orm.em.fork(),
      `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
         discovery_status, human_review_triggers, "values", demands, created_at, updated_at, deleted_at)
       values (?, ?, ?, 'G', '', 'en', 'other', 'in_discovery', '[]', '[]', '[]', now(), now(), ?)`,
      [id, accountId, randomUUID(), deleted ? new Date().toISOString() : null],
    );
    return id;
  }
  const userMessage = (accountId: string, goferId: string, createdAt: string) =>
    sql(
      fleet.orm.em.fork(),
      `insert into read.gofer_messages (id, gofer_id, account_id, chat_id, role, content, pending_query,
         attachment_ids, created_at) values (?, ?, ?, 'c', 'user', 'yes', false, '[]', ?)`,
      [randomUUID(), goferId, accountId, createdAt],
    );
  const question = (seq: number, goferId: string, content: string, s: number) =>
    envelope(seq, {
      type: 'gofer_question',
      goferId,
      payload: { messageId: randomUUID(), content, createdAt: at(s) },
      reply: { method: 'POST', path: `/api/v1/gofers/${goferId}/chat/messages` },
      createdAt: at(s),
    });

  it('lists each open question once, as its latest asking, byte for byte; answered and deleted ones drop out', async () => {
    const owner = await insertAccount(fleet.orm);
    const [g1, g2, gone] = [await gofer(owner), await gofer(owner), await gofer(owner, true)];
    await insertEvent(fleet.orm, owner, envelope(1, { goferId: g1 }));
    await insertEvent(fleet.orm, owner, question(2, g1, 'Remote?', 2));
    const latest = await insertEvent(fleet.orm, owner, question(3, g1, 'Remote?', 3));
    await insertEvent(fleet.orm, owner, question(4, g2, 'Salary?', 4));
    await userMessage(owner, g2, at(5));
    const open = await insertEvent(fleet.orm, owner, question(5, g2, 'Start date?', 6));
    await insertEvent(fleet.orm, owner, question(6, gone, 'Anything?', 7));
    const digest = () =>
      questions.app.inject({
        method: 'GET',
        url: '/api/v1/events/unresolved',
        headers: { authorization: `Bearer ${key}` },
      });
    // The digest of the account that owns `key` is unaffected by another account's questions.
    expect((await digest()).json()).toEqual({
      events: [],
      summary: { pendingQuestions: 0, goferCount: 0, decisions: 0 },
    });
    const res = await questions.app.inject({
      method: 'GET',
      url: '/api/v1/events/unresolved',
      headers: { authorization: `Bearer ${await jwtFor(owner)}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(
      `{"events":[${latest},${open}],"summary":{"pendingQuestions":2,"goferCount":2,"decisions":0}}`,
    );
    await userMessage(owner, g1, at(8));
    const after = await questions.app.inject({
      method: 'GET',
      url: '/api/v1/events/unresolved',
      headers: { authorization: `Bearer ${await jwtFor(owner)}` },
    });
    expect(after.body).toBe(
      `{"events":[${open}],"summary":{"pendingQuestions":1,"goferCount":1,"decisions":0}}`,
    );
  });
});

describe('when ENABLE_OPEN_API is off', () => {
  it('has no OAN route', async () => {
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
