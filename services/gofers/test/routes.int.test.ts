import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalCallHeaders, internalCommandHeaders, signOanJwt } from '@oan/auth';
import { observeStatements, sql } from '@oan/db';
import type { ObjectStorage } from '@oan/storage';
import { body, expectError, waitFor } from '@oan/testing';
import { addAssistantTurn } from '../src/commands/assistantTurn.ts';
import { appendGoferEvents } from './appendEvents.ts';
import type { ChatMessageAdded, GoferEvent } from '@oan/domain';
import { placeholderTexts } from '../src/domain/goferTexts.ts';
import { JWT_SECRET, startGoferFleet, type GoferFleet } from './helpers.ts';

/** In-memory object storage: records deletions, fails them on demand. */
function memoryStorage() {
  const deleted: string[] = [];
  let failDeletes = false;
  const storage = {
    put: async () => undefined,
    get: async () => Buffer.alloc(0),
    delete: async (key: string) => {
      if (failDeletes) throw new Error('storage is down');
      deleted.push(key);
    },
    signedUrl: async (key: string) => ({
      url: `http://files.test/${key}`,
      expiresAt: Date.now() + 3_600_000,
    }),
    close: async () => undefined,
  } satisfies ObjectStorage;
  return { storage, deleted, failDeletes: (v: boolean) => (failDeletes = v) };
}

const WEB = 'https://oan.example.com';
let fleet: GoferFleet;
let withStorage: GoferFleet['app'];
let withWeb: GoferFleet['app'];
const files = memoryStorage();
beforeAll(async () => {
  fleet = await startGoferFleet();
  withStorage = await fleet.buildAnother({}, { storage: files.storage });
  withWeb = await fleet.buildAnother({ OAN_WEB_BASE_URL: `${WEB}/` });
});
afterAll(async () => fleet?.close());

type Headers = Record<string, string>;
type App = GoferFleet['app'];
const api = (app: App, method: 'GET' | 'POST' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  app.inject({
    method,
    url: `/api/v1${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

interface Created {
  goferId: string;
  chatId: string;
  greeting: string;
  webUrl?: string;
}
interface Item {
  id: string;
  role: string;
  content: string;
  createdAt: string;
  attachments?: unknown[];
  kind?: string;
  pairing?: unknown;
}

async function newGofer(h: Headers, payload: unknown = {}, app = fleet.app): Promise<Created> {
  const res = await api(app, 'POST', '/gofers', h, payload);
  expect(res.statusCode).toBe(201);
  return body<Created>(res);
}
const history = async (h: Headers, goferId: string, query = '', app = fleet.app) => {
  const res = await api(app, 'GET', `/gofers/${goferId}/chat/messages${query}`, h);
  expect(res.statusCode).toBe(200);
  return body<Item[]>(res);
};
const list = async (h: Headers, app = fleet.app) => {
  const res = await api(app, 'GET', '/gofers', h);
  expect(res.statusCode).toBe(200);
  return body<Record<string, unknown>[]>(res);
};
/** Appends events another component would (uploads, matching) straight to the Gofer's stream. */
const append = (goferId: string, accountId: string, events: GoferEvent[]) =>
  appendGoferEvents(fleet.ctx, goferId, accountId, events);
const eventCount = async () => (await fleet.events()).length;

describe('creating Gofers', () => {
  it('answers 201 {goferId, chatId, greeting} to {} and {locale:"en"}, without webUrl when unconfigured', async () => {
    const { headers } = await fleet.account();
    for (const payload of [{}, { locale: 'en' }]) {
      const created = await newGofer(headers, payload);
      expect(Object.keys(created).sort()).toEqual(['chatId', 'goferId', 'greeting']);
      expect(created.greeting).toBe(placeholderTexts('en').greeting);
    }
    // A missing body, and a JSON content type with an empty body (accepted leniently), count as `{}`.
    for (const extra of [{}, { headers: { ...headers, 'content-type': 'application/json' } }]) {
      const res = await fleet.app.inject({ method: 'POST', url: '/api/v1/gofers', headers, ...extra });
      expect(res.statusCode, res.body).toBe(201);
    }
  });

  it('is two statements: the credential lookup and one append of the Gofer, its chat and greeting', async () => {
    const { accountId, headers } = await fleet.account('dsh');
    // The key's once-a-minute last_used_at write happens here, in the background: wait until it has
    // landed so that it is not counted below.
    await list(headers);
    await waitFor(async () => {
      const keys = await sql<{ used: boolean }>(
        fleet.orm.em.fork(),
        'select last_used_at is not null as used from auth.api_keys where account_id = ?',
        [accountId],
      );
      return keys.length > 0 && keys.every((k) => k.used);
    });
    const seen: string[] = [];
    const stop = observeStatements((q) => {
      // The command's own: credentials, the platform, the Gofer's stream (not the outbox publisher's scan).
      if (/auth\.|read\.accounts|"gofers"\.events/.test(q.sql) && !/outbox o join/.test(q.sql))
        seen.push(q.sql);
    });
    let created: Created;
    try {
      created = await newGofer(headers);
    } finally {
      stop();
    }
    expect(seen, seen.join('\n')).toHaveLength(2);
    expect(seen[0]).toContain('from auth.api_keys');
    expect(seen[1]).toMatch(/^with x as/);
    const events = await fleet.ctx.store.readStream(fleet.orm.em.fork(), `gofer-${created.goferId}`);
    expect(events.map((e) => [e.type, e.streamVersion])).toEqual([
      ['GoferCreated', 1],
      ['ChatMessageAdded', 2],
    ]);
  });

  it('greets and names in Chinese for zh, and inherits the registration platform, never the body’s', async () => {
    const { accountId, headers } = await fleet.account('dsh');
    const created = await newGofer(headers, {
      locale: 'zh-CN',
      humanReviewTriggers: [' money ', ''],
      sourcePlatform: 'hermes',
    });
    expect(created.greeting).toBe(placeholderTexts('zh').greeting);
    const [item] = await list(headers);
    expect(item).toMatchObject({ goferId: created.goferId, name: placeholderTexts('zh').name });
    const [row] = await sql<{ source_platform: string; human_review_triggers: string[]; account_id: string }>(
      fleet.orm.em.fork(),
      'select source_platform, human_review_triggers, account_id from read.gofers where id = ?',
      [created.goferId],
    );
    expect(row).toEqual({ source_platform: 'dsh', human_review_triggers: ['money'], account_id: accountId });
  });

  it('emits an absolute webUrl on create and list when OAN_WEB_BASE_URL is set (<base>/gofers/<goferId>)', async () => {
    const { headers } = await fleet.account();
    const created = await newGofer(headers, {}, withWeb);
    expect(created.webUrl).toBe(`${WEB}/gofers/${created.goferId}`);
    expect((await list(headers, withWeb))[0]!.webUrl).toBe(created.webUrl);
    expect((await list(headers))[0]).not.toHaveProperty('webUrl');
  });

  it('refuses wrong types with 400 VALIDATION_ERROR and appends nothing', async () => {
    const { headers } = await fleet.account();
    const before = await eventCount();
    for (const payload of [
      { locale: 5 },
      { humanReviewTriggers: 'money' },
      { humanReviewTriggers: [1] },
      [],
    ]) {
      expectError(await api(fleet.app, 'POST', '/gofers', headers, payload), 400, 'VALIDATION_ERROR');
    }
    const notJson = await fleet.app.inject({
      method: 'POST',
      url: '/api/v1/gofers',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{nope',
    });
    expect(notJson.statusCode).toBe(400);
    expect(await eventCount()).toBe(before);
  });
});

describe('listing Gofers', () => {
  it('shows the caller’s Gofers oldest first, in discovery, and nobody else’s', async () => {
    const a = await fleet.account();
    const b = await fleet.account();
    expect(await list(a.headers)).toEqual([]);
    const first = await newGofer(a.headers);
    const second = await newGofer(a.headers, { locale: 'zh' });
    await newGofer(b.headers);
    const items = await list(a.headers);
    expect(items.map((i) => i.goferId)).toEqual([first.goferId, second.goferId]);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual([
        'createdAt',
        'description',
        'discoveryStatus',
        'goferId',
        'name',
      ]);
      expect(item.discoveryStatus).toBe('in_discovery');
      expect(new Date(item.createdAt as string).toISOString()).toBe(item.createdAt);
    }
  });

  it('shows a status and profile the brain changed', async () => {
    const { headers } = await fleet.account();
    const g = await newGofer(headers);
    await addAssistantTurn(fleet.ctx, {
      goferId: g.goferId,
      replyTo: null,
      content: 'Ready!',
      pendingQuery: false,
      responseConstraints: null,
      profile: { name: 'Ada', description: 'Finds a CTO', values: [], demands: [] },
      discoveryStatus: 'ready_for_pairing',
    });
    expect(await list(headers)).toMatchObject([
      { name: 'Ada', description: 'Finds a CTO', discoveryStatus: 'ready_for_pairing' },
    ]);
  });

  it('refuses an unknown key (401) and a non-OAN JWT (403 errors.realmNotAllowed)', async () => {
    const unknown = await api(fleet.app, 'GET', '/gofers', { authorization: 'Bearer gofers_deadbeef' });
    expectError(unknown, 401, 'UNAUTHORIZED');
    expect(body<{ error: string }>(unknown).error).toContain('Unauthorized'); // what the connector matches on
    const { accountId } = await fleet.account();
    const jwt = await signOanJwt(JWT_SECRET, { accountId, realm: 'gofers', ttlSeconds: 60 });
    const res = await api(fleet.app, 'GET', '/gofers', { authorization: `Bearer ${jwt}` });
    expectError(res, 403, 'FORBIDDEN');
    expect(body<{ error: string }>(res).error).toBe('errors.realmNotAllowed');
  });

  it('does not exist with ENABLE_OPEN_API off (all or nothing)', async () => {
    const closed = await fleet.buildAnother({ ENABLE_OPEN_API: 'false' });
    const { headers } = await fleet.account();
    expect((await api(closed, 'GET', '/gofers', headers)).statusCode).toBe(404);
  });
});

describe('a chat message sent by an internal call with a command id', () => {
  it('is posted once however often it is sent, each time answered alike', async () => {
    const { headers } = await fleet.account();
    const g = await newGofer(headers);
    const once = { ...headers, ...internalCommandHeaders(JWT_SECRET, `runtimes:${randomUUID()}:1`) };
    const url = `/gofers/${g.goferId}/chat/messages`;
    const answers = await Promise.all([
      api(fleet.app, 'POST', url, once, { content: 'yes, go ahead' }),
      api(fleet.app, 'POST', url, once, { content: 'yes, go ahead' }),
    ]);
    const again = await api(fleet.app, 'POST', url, once, { content: 'yes, go ahead' });
    for (const res of [...answers, again]) {
      expect(res.statusCode).toBe(202);
      expect(res.body).toBe(answers[0].body);
    }
    const users = (await history(headers, g.goferId)).filter((i) => i.role === 'user');
    expect(users.map((i) => i.content)).toEqual(['yes, go ahead']);
  });

  it('refuses a command id without the internal secret (401), appending nothing', async () => {
    const { headers } = await fleet.account();
    const g = await newGofer(headers);
    const before = await eventCount();
    const url = `/gofers/${g.goferId}/chat/messages`;
    const tries: Headers[] = [
      { 'x-oan-command-id': 'runtimes:x:1' },
      { 'x-oan-command-id': 'runtimes:x:1', 'x-oan-internal': 'guess' },
      { 'x-oan-command-id': 'runtimes:x:1', ...internalCallHeaders('another-secret-another-secret-00') },
    ];
    for (const extra of tries) {
      const res = await api(fleet.app, 'POST', url, { ...headers, ...extra }, { content: 'hi' });
      expect(res.statusCode).toBe(401);
      expect(body(res)).toEqual({ error: expect.any(String), code: 'UNAUTHORIZED' });
    }
    expect(await eventCount()).toBe(before);
  });
});

describe('the role-chat: posting and history', () => {
  it('accepts a goal posted right after creation and shows it after the greeting, without retries', async () => {
    const { headers } = await fleet.account();
    const g = await newGofer(headers);
    const posted = await api(fleet.app, 'POST', `/gofers/${g.goferId}/chat/messages`, headers, {
      content: '  Find me a CTO  ',
    });
    expect(posted.statusCode).toBe(202);
    expect(body(posted)).toEqual({ accepted: true });
    const items = await history(headers, g.goferId);
    expect(items.map((i) => [i.role, i.content])).toEqual([
      ['assistant', g.greeting],
      ['user', '  Find me a CTO  '],
    ]);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(['content', 'createdAt', 'id', 'role']);
    }
  });

  it('refuses {}, blank content, two ids, unknown or foreign ids, and ids without storage: 400, nothing appended', async () => {
    const { accountId, headers } = await fleet.account();
    const g = await newGofer(headers);
    const other = await newGofer(headers);
    const photo = (goferId: string) => attachmentAdded(goferId, accountId, 'photo');
    const own = photo(g.goferId);
    const second = attachmentAdded(g.goferId, accountId, 'document');
    const foreign = photo(other.goferId);
    await append(g.goferId, accountId, [own, second]);
    await append(other.goferId, accountId, [foreign]);
    const before = await eventCount();
    const url = `/gofers/${g.goferId}/chat/messages`;
    const ownId = own.data.attachmentId;
    for (const payload of [
      {},
      { content: '   ' },
      { content: '' },
      { attachmentIds: [] },
      { content: 'x', attachmentIds: [ownId, ownId] },
      { content: 'x', attachmentIds: [ownId, second.data.attachmentId] }, // two valid ids: at most one attachment
      { attachmentIds: [randomUUID()] },
      { attachmentIds: [foreign.data.attachmentId] },
      { content: 5 },
      { attachmentIds: 'x' },
    ]) {
      expectError(await api(withStorage, 'POST', url, headers, payload), 400, 'VALIDATION_ERROR');
    }
    expectError(
      await api(fleet.app, 'POST', url, headers, { attachmentIds: [ownId] }),
      400,
      'VALIDATION_ERROR',
    );
    expect(await eventCount()).toBe(before);
  });

  it('resolves attachments server-side, refuses a photo twice, and drops deleted files (no empty `attachments`)', async () => {
    const { accountId, headers } = await fleet.account();
    const g = await newGofer(headers, {}, withStorage);
    const doc = attachmentAdded(g.goferId, accountId, 'document');
    const pic = attachmentAdded(g.goferId, accountId, 'photo');
    await append(g.goferId, accountId, [doc, pic]);
    const url = `/gofers/${g.goferId}/chat/messages`;
    expect(
      (await api(withStorage, 'POST', url, headers, { attachmentIds: [doc.data.attachmentId] })).statusCode,
    ).toBe(202);
    expect(
      (
        await api(withStorage, 'POST', url, headers, {
          content: 'me',
          attachmentIds: [pic.data.attachmentId],
        })
      ).statusCode,
    ).toBe(202);
    expectError(
      await api(withStorage, 'POST', url, headers, { attachmentIds: [pic.data.attachmentId] }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (await api(withStorage, 'POST', url, headers, { attachmentIds: [doc.data.attachmentId] })).statusCode,
    ).toBe(202);

    const items = await history(headers, g.goferId);
    expect(items.slice(1).map((i) => [i.content, i.attachments])).toEqual([
      [
        '',
        [
          {
            id: doc.data.attachmentId,
            kind: 'document',
            name: 'doc.txt',
            mimeType: 'text/plain',
            size: 42,
            ragStatus: 'processing',
          },
        ],
      ],
      [
        'me',
        [{ id: pic.data.attachmentId, kind: 'photo', name: 'photo.png', mimeType: 'image/png', size: 42 }],
      ],
      [
        '',
        [
          {
            id: doc.data.attachmentId,
            kind: 'document',
            name: 'doc.txt',
            mimeType: 'text/plain',
            size: 42,
            ragStatus: 'processing',
          },
        ],
      ],
    ]);
    await sql(fleet.orm.em.fork(), 'update read.gofer_attachments set deleted_at = now() where id = ?', [
      pic.data.attachmentId,
    ]);
    const after = await history(headers, g.goferId, '?since=2000-01-01T00:00:00Z');
    expect(after.find((i) => i.content === 'me')).not.toHaveProperty('attachments');
    expect(after.filter((i) => i.attachments)).toHaveLength(2);
  });

  it('pages: newest 50 oldest-first with every role; since: later user/assistant turns only, cap 200', async () => {
    const { accountId, headers } = await fleet.account();
    const g = await newGofer(headers);
    const t0 = Date.now() + 1000;
    const at = (i: number) => new Date(t0 + i * 1000).toISOString();
    const msg = (i: number, over: Partial<ChatMessageAdded> = {}) =>
      chatMessage(g, accountId, { messageId: `m${i}`, content: `#${i}`, createdAt: at(i), ...over });
    await append(g.goferId, accountId, [
      ...Array.from({ length: 205 }, (_, i) => msg(i, { role: i % 2 ? 'assistant' : 'user' })),
      msg(205, { role: 'assistant', pendingQuery: true, responseConstraints: '{"format":"boolean"}' }),
      msg(206, { role: 'system', kind: 'pairing', pairing: JSON.stringify(pairing) }),
      msg(207, { role: 'user' }),
    ]);
    const page = await history(headers, g.goferId);
    expect(page.map((i) => i.content)).toEqual(Array.from({ length: 50 }, (_, i) => `#${158 + i}`));
    expect(page.map((i) => i.role)).toContain('system');
    expect(await history(headers, g.goferId, '?since=yesterday')).toEqual(page);
    expect(await history(headers, g.goferId, '?since=2026-13-45T00:00:00Z')).toEqual(page);

    const since = await history(headers, g.goferId, `?since=${encodeURIComponent(at(100))}`);
    expect(since.map((i) => i.content)).toEqual([
      ...Array.from({ length: 105 }, (_, i) => `#${101 + i}`).slice(0, 104),
      '#207',
    ]);
    const all = await history(headers, g.goferId, '?since=2000-01-01');
    expect(all).toHaveLength(200);
    expect(all[0]!.content).toBe(g.greeting);
    expect(all.every((i) => i.role !== 'system')).toBe(true);
    // A zone-less time is UTC; an unencoded `+` (decoded as a space) still counts as the offset.
    expect(await history(headers, g.goferId, `?since=${at(100).replace('Z', '+00:00')}`)).toEqual(since);
    expect(await history(headers, g.goferId, `?since=${at(100).replace('Z', '')}`)).toEqual(since);
  });

  it('shows pairing rows with their object; self falls back to the Gofer; incomplete rows are plain', async () => {
    const { accountId, headers } = await fleet.account();
    const g = await newGofer(headers);
    const row = (n: number, p: unknown) =>
      chatMessage(g, accountId, {
        messageId: `p${n}`,
        role: 'system',
        content: `pairing ${n}`,
        kind: 'pairing',
        pairing: JSON.stringify(p),
      });
    await append(g.goferId, accountId, [
      row(1, pairing),
      row(2, { threadId: 't2', counterpart: { roleId: 'r2', name: 'Bob' } }),
      row(3, { counterpart: { roleId: 'r3', name: 'Cy' } }),
    ]);
    const [, full, legacy, plain] = await history(headers, g.goferId);
    expect(full).toMatchObject({ role: 'system', kind: 'pairing', pairing });
    expect(legacy!.pairing).toEqual({
      threadId: 't2',
      self: { roleId: g.goferId, name: placeholderTexts('en').name },
      counterpart: { roleId: 'r2', name: 'Bob' },
    });
    expect(Object.keys(plain!).sort()).toEqual(['content', 'createdAt', 'id', 'role']);
  });

  it('never turns the owner’s own messages into events', async () => {
    const { accountId, headers } = await fleet.account();
    const g = await newGofer(headers);
    await api(fleet.app, 'POST', `/gofers/${g.goferId}/chat/messages`, headers, { content: 'my goal' });
    const turn = await addAssistantTurn(fleet.ctx, {
      goferId: g.goferId,
      replyTo: null,
      content: 'Noted',
      pendingQuery: false,
      responseConstraints: null,
    });
    const events = await waitFor(async () => {
      const rows = await sql<{ envelope: string }>(
        fleet.orm.em.fork(),
        'select envelope from read.oan_event where account_id = ? order by seq',
        [accountId],
      );
      return (
        rows.length >= 2 &&
        rows.map((r) => JSON.parse(r.envelope) as { type: string; payload: { content: string } })
      );
    });
    expect(events.map((e) => [e.type, e.payload.content])).toEqual([
      ['gofer_message', g.greeting],
      ['gofer_message', 'Noted'],
    ]);
    expect(turn.appended).toBe(true);
  });
});

describe('ownership (403 vs 404)', () => {
  it('answers an unknown, a foreign, a deleted and a malformed Gofer with byte-identical 403s', async () => {
    const owner = await fleet.account();
    const intruder = await fleet.account();
    const g = await newGofer(owner.headers);
    const gone = await newGofer(intruder.headers);
    expect((await api(fleet.app, 'DELETE', `/gofers/${gone.goferId}`, intruder.headers)).statusCode).toBe(
      200,
    );
    const before = await eventCount();
    for (const [method, payload] of [
      ['POST', { content: 'hi' }],
      ['POST', {}],
      ['GET', undefined],
    ] as const) {
      const answers = [];
      for (const id of [g.goferId, randomUUID(), gone.goferId, 'not%20an%20id', '%00']) {
        answers.push(
          await api(withStorage, method, `/gofers/${id}/chat/messages`, intruder.headers, payload),
        );
      }
      for (const res of answers) {
        expectError(res, 403, 'FORBIDDEN');
        expect(res.body).toBe(answers[0]!.body);
      }
    }
    expect(await eventCount()).toBe(before);
  });

  it('deletes: 200 {deleted, goferId}; gone from the very next list; foreign 403, unknown and twice 404', async () => {
    const owner = await fleet.account();
    const intruder = await fleet.account();
    const g = await newGofer(owner.headers, {}, withStorage);
    const doc = attachmentAdded(g.goferId, owner.accountId, 'document');
    await append(g.goferId, owner.accountId, [doc]);
    expectError(await api(withStorage, 'DELETE', `/gofers/${g.goferId}`, intruder.headers), 403, 'FORBIDDEN');
    expectError(await api(withStorage, 'DELETE', `/gofers/${randomUUID()}`, owner.headers), 404, 'NOT_FOUND');
    expectError(await api(withStorage, 'DELETE', '/gofers/%00', owner.headers), 404, 'NOT_FOUND');
    const res = await api(withStorage, 'DELETE', `/gofers/${g.goferId}`, owner.headers);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({ deleted: true, goferId: g.goferId });
    expect(await list(owner.headers)).toEqual([]);
    expect(files.deleted).toContain(doc.data.storageKey);
    expectError(await api(withStorage, 'DELETE', `/gofers/${g.goferId}`, owner.headers), 404, 'NOT_FOUND');
    expectError(
      await api(withStorage, 'GET', `/gofers/${g.goferId}/chat/messages`, owner.headers),
      403,
      'FORBIDDEN',
    );
  });

  it('still deletes when the storage fails (best effort)', async () => {
    const owner = await fleet.account();
    const g = await newGofer(owner.headers);
    await append(g.goferId, owner.accountId, [attachmentAdded(g.goferId, owner.accountId, 'photo')]);
    files.failDeletes(true);
    try {
      expect((await api(withStorage, 'DELETE', `/gofers/${g.goferId}`, owner.headers)).statusCode).toBe(200);
    } finally {
      files.failDeletes(false);
    }
  });
});

const pairing = {
  threadId: 't1',
  self: { roleId: 'mine', name: 'Me' },
  counterpart: { roleId: 'theirs', name: 'Them' },
};

function chatMessage(g: Created, accountId: string, over: Partial<ChatMessageAdded>): GoferEvent {
  return {
    type: 'ChatMessageAdded',
    data: {
      goferId: g.goferId,
      accountId,
      chatId: g.chatId,
      messageId: randomUUID(),
      role: 'user',
      content: '',
      attachmentIds: [],
      kind: null,
      pairing: null,
      pendingQuery: false,
      responseConstraints: null,
      replyTo: null,
      createdAt: new Date().toISOString(),
      ...over,
    },
  };
}

function attachmentAdded(goferId: string, accountId: string, kind: 'photo' | 'document') {
  const attachmentId = randomUUID();
  return {
    type: 'AttachmentAdded',
    data: {
      goferId,
      accountId,
      attachmentId,
      kind,
      name: kind === 'photo' ? 'photo.png' : 'doc.txt',
      mimeType: kind === 'photo' ? 'image/png' : 'text/plain',
      size: 42,
      width: kind === 'photo' ? 10 : null,
      height: kind === 'photo' ? 10 : null,
      storageKey: `${goferId}/${attachmentId}`,
      ragStatus: kind === 'photo' ? 'unsupported' : 'processing',
      createdAt: new Date().toISOString(),
    },
  } satisfies GoferEvent;
}
