import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalCommandHeaders } from '@oan/auth';
import { sql } from '@oan/db';
import { body, expectError, waitFor } from '@oan/testing';
import { rebuildWriteState } from '../src/infra/store.ts';
import { startConversationFleet, type ConversationFleet, type Match, type Res } from './helpers.ts';

interface Message {
  id: string;
  senderUserId: string;
  content: string;
  attachments: unknown[];
  changeSequence: string;
  createdAt: string;
}

let f: ConversationFleet;
beforeAll(async () => {
  f = await startConversationFleet();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

const path = (id: string, rest = '/messages') => `/api/v1/conversations/${id}${rest}`;
const send = (m: Pick<Match, 'conversationId'>, who: { headers: Record<string, string> }, payload: unknown) =>
  f.app.inject({
    method: 'POST',
    url: path(m.conversationId),
    headers: who.headers,
    payload: payload as object,
  });
const history = (m: Pick<Match, 'conversationId'>, who: { headers: Record<string, string> }, query = '') =>
  f.app.inject({ method: 'GET', url: `${path(m.conversationId)}${query}`, headers: who.headers });

describe('POST /conversations/:id/messages', () => {
  it('answers 201 with the message; changeSequence is a dense per-conversation bigint string', async () => {
    const m = await f.match();
    const first = await send(m, m.a, { content: 'Hello Lin' });
    expect(first.statusCode).toBe(201);
    const msg = body<Message>(first);
    expect(Object.keys(msg)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
    expect(msg).toMatchObject({
      senderUserId: m.a.accountId,
      content: 'Hello Lin',
      attachments: [],
      changeSequence: '1',
    });
    expect(msg.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const second = body<Message>(await send(m, m.b, { content: 'Hi!' }));
    expect(second.changeSequence).toBe('2');
    // Another conversation counts on its own.
    const other = await f.match();
    expect(body<Message>(await send(other, other.b, { content: 'x' })).changeSequence).toBe('1');
  });

  it('gives racing sends from both sides distinct, gap-free changeSequences', async () => {
    const m = await f.match();
    const sends = Array.from({ length: 60 }, (_, i) => send(m, i % 2 ? m.a : m.b, { content: `m${i}` }));
    const results = await Promise.all(sends);
    expect(results.map((r) => r.statusCode)).toEqual(results.map(() => 201));
    const seqs = results.map((r) => Number(body<Message>(r).changeSequence)).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  });

  it('refuses an empty, blank, over-long or malformed body with a 400 and appends nothing', async () => {
    const m = await f.match();
    const before = (await f.events()).length;
    const bad: unknown[] = [
      {},
      { content: '' },
      { content: '   \n' },
      { attachmentIds: [] },
      { content: 'x'.repeat(20_001) },
      { content: 42 },
      { content: 'ok', attachmentIds: 'abc' },
      { content: 'ok', attachmentIds: Array.from({ length: 11 }, () => randomUUID()) },
      { content: 'ok', attachmentIds: [randomUUID()] },
    ];
    for (const payload of bad) {
      const res = await send(m, m.a, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    const garbage = await f.app.inject({
      method: 'POST',
      url: path(m.conversationId),
      headers: { ...m.a.headers, 'content-type': 'application/json' },
      payload: '{"content":',
    });
    expect(garbage.statusCode).toBe(400);
    expect((await f.events()).length).toBe(before);
  });

  it('tells the recipient, and only the recipient, with a relay_message', async () => {
    const m = await f.match();
    const sent = body<Message>(await send(m, m.a, { content: 'for b only' }));
    await waitFor(async () => (await f.envelopes(m.b.accountId)).length === 1, { what: 'relay_message' });
    const [env] = await f.envelopes(m.b.accountId);
    expect(env).toMatchObject({
      v: 1,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId: m.conversationId,
      reply: { method: 'POST', path: `/api/v1/conversations/${m.conversationId}/messages` },
    });
    expect(env).not.toHaveProperty('goferId');
    expect(JSON.stringify(env!.payload)).toBe(
      JSON.stringify({ messageId: sent.id, content: 'for b only', createdAt: sent.createdAt }),
    );
    expect(await f.envelopes(m.a.accountId)).toEqual([]);
  });
});

describe('a message sent by an internal call with a command id', () => {
  it('is sent once however often it is sent, answered with the same message', async () => {
    const m = await f.match();
    const headers = {
      ...m.a.headers,
      ...internalCommandHeaders(f.config.JWT_SECRET, `runtimes:${randomUUID()}:1`),
    };
    const sent = () => send(m, { headers }, { content: 'Once only' });
    const answers = [...(await Promise.all([sent(), sent()])), await sent()];
    for (const res of answers) {
      expect(res.statusCode).toBe(201);
      expect(res.body).toBe(answers[0]!.body);
    }
    const page = await waitFor(async () => {
      const rows = body<Message[]>(await history(m, m.b));
      return rows.length > 0 ? rows : undefined;
    });
    expect(page.map((r) => r.content)).toEqual(['Once only']);
    expect(body<Message>(await send(m, m.b, { content: 'next' })).changeSequence).toBe('2');
  });
});

describe('GET /conversations/:id/messages: history after since, 50 by default, 200 at most', () => {
  it('pages ascending by changeSequence with an exclusive since, both sides seeing the same history', async () => {
    const m = await f.match();
    for (let i = 1; i <= 7; i++)
      expect((await send(m, i % 2 ? m.a : m.b, { content: `n${i}` })).statusCode).toBe(201);
    const all = body<Message[]>(await history(m, m.a));
    expect(all.map((x) => x.content)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7']);
    expect(all.map((x) => x.changeSequence)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    await waitFor(async () => body<Message[]>(await history(m, m.b)).length === 7, { what: 'b sees 7' });
    expect(body<Message[]>(await history(m, m.b))).toEqual(all);
    const page = body<Message[]>(await history(m, m.b, '?since=2&limit=3'));
    expect(page.map((x) => x.changeSequence)).toEqual(['3', '4', '5']);
    expect(body<Message[]>(await history(m, m.b, '?since=7'))).toEqual([]);
    expect(body<Message[]>(await history(m, m.b, '?since=99999999999999999999999'))).toEqual([]);
  });

  it('refuses a non-numeric since or a limit outside 1..200 with a 400', async () => {
    const m = await f.match();
    for (const q of ['?since=abc', '?since=-1', '?since=1.5', '?limit=0', '?limit=201', '?limit=x']) {
      expectError(await history(m, m.a, q), 400, 'VALIDATION_ERROR');
    }
    expect((await history(m, m.a, '?limit=200')).statusCode).toBe(200);
  });

  it('stops a page before a changeSequence not projected yet, so a cursor never skips a message', async () => {
    const m = await f.match();
    for (const c of ['one', 'two', 'three']) await send(m, m.a, { content: c });
    await history(m, m.a); // read-your-writes: all three are projected now
    // Simulate the projector lagging on message 2 (another partition): remove its read row.
    const em = f.fleet.projectorOrm.em.fork();
    const [row] = await sql<Record<string, unknown>>(
      em,
      'select * from read.conversation_messages where conversation_id = ? and change_sequence = 2',
      [m.conversationId],
    );
    await sql(em, 'delete from read.conversation_messages where id = ?', [row!.id]);
    expect(body<Message[]>(await history(m, m.a)).map((x) => x.content)).toEqual(['one']);
    expect(body<Message[]>(await history(m, m.a, '?since=1'))).toEqual([]);
    await sql(
      em,
      `insert into read.conversation_messages select * from jsonb_populate_record(null::read.conversation_messages, ?::jsonb)`,
      [JSON.stringify(row)],
    );
    expect(body<Message[]>(await history(m, m.a, '?since=1')).map((x) => x.content)).toEqual([
      'two',
      'three',
    ]);
  });
});

describe('recall (extension: DELETE /conversations/:id/messages/:messageId)', () => {
  it('removes the sender’s message from both histories; only the sender may, once', async () => {
    const m = await f.match();
    const keep = body<Message>(await send(m, m.a, { content: 'keep' }));
    const oops = body<Message>(await send(m, m.a, { content: 'oops' }));
    const after = body<Message>(await send(m, m.b, { content: 'after' }));
    const del = (who: Match['a'], id: string) =>
      f.app.inject({
        method: 'DELETE',
        url: path(m.conversationId, `/messages/${id}`),
        headers: who.headers,
      });
    expectError(await del(m.b, oops.id), 403, 'FORBIDDEN');
    const ok = await del(m.a, oops.id);
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBe('');
    expectError(await del(m.a, oops.id), 404, 'NOT_FOUND');
    expectError(await del(m.a, randomUUID()), 404, 'NOT_FOUND');
    expect(body<Message[]>(await history(m, m.a)).map((x) => x.id)).toEqual([keep.id, after.id]);
    await waitFor(async () => body<Message[]>(await history(m, m.b)).length === 2, {
      what: 'b sees the recall',
    });
    // The recalled changeSequence stays taken: a cursor just past it continues.
    expect(body<Message[]>(await history(m, m.b, '?since=1')).map((x) => x.changeSequence)).toEqual(['3']);
    expect(body<Message>(await send(m, m.b, { content: 'next' })).changeSequence).toBe('4');
  });
});

describe('probe-safe 403 for unknown, closed and foreign conversations', () => {
  it('answers a third account byte-identically for an existing, a random and a malformed id', async () => {
    const m = await f.match();
    const sent = body<Message>(await send(m, m.a, { content: 'private' }));
    const third = await f.account();
    const ids = [m.conversationId, randomUUID(), 'not a valid id!'];
    const calls = (id: string) => [
      { method: 'GET' as const, url: path(encodeURIComponent(id)) },
      { method: 'POST' as const, url: path(encodeURIComponent(id)), payload: { content: 'hi' } },
      { method: 'DELETE' as const, url: path(encodeURIComponent(id), `/messages/${sent.id}`) },
      { method: 'GET' as const, url: path(encodeURIComponent(id), `/attachments/${randomUUID()}/url`) },
    ];
    const before = (await f.events()).length;
    for (let i = 0; i < 4; i++) {
      const answers: Res[] = [];
      for (const id of ids) answers.push(await f.app.inject({ ...calls(id)[i]!, headers: third.headers }));
      for (const r of answers) expectError(r, 403, 'FORBIDDEN');
      expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    }
    expect((await f.events()).length).toBe(before);
  });

  it('asks for credentials first (401) and keeps mobile-realm JWTs out (multi+realm)', async () => {
    const m = await f.match();
    const res = await f.app.inject({ method: 'GET', url: path(m.conversationId) });
    expectError(res, 401, 'UNAUTHORIZED');
    // the credential is checked before the body or the query is validated.
    const badBody = await f.app.inject({
      method: 'POST',
      url: path(m.conversationId),
      payload: { content: 5 },
    });
    expectError(badBody, 401, 'UNAUTHORIZED');
    expectError(
      await f.app.inject({ method: 'GET', url: `${path(m.conversationId)}?limit=0` }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('opening conversations', () => {
  it('opens a conversation on first use from the projected accepted match, before the opener reactor', async () => {
    const m = await f.match({ open: false });
    expectError(await send(m, m.a, { content: 'too early' }), 403, 'FORBIDDEN');
    await sql(
      f.fleet.projectorOrm.em.fork(),
      `insert into read.match_requests (id, thread_id, requester_gofer_id, requester_account_id,
         recipient_gofer_id, recipient_account_id, status, match_id, conversation_id, decided_by,
         requested_at, decided_at, updated_at)
       values (?, ?, ?, ?, ?, ?, 'accepted', ?, ?, 'recipient', now(), now(), now())`,
      [
        randomUUID(),
        m.threadId,
        m.a.goferId,
        m.a.accountId,
        m.b.goferId,
        m.b.accountId,
        m.matchId,
        m.conversationId,
      ],
    );
    const res = await send(m, m.b, { content: 'now' });
    expect(res.statusCode).toBe(201);
    const types = (await f.events())
      .filter((e) => e.data.conversationId === m.conversationId)
      .map((e) => e.type);
    expect(types).toEqual(['ConversationOpened', 'ConversationMessageSent']);
  });

  it('keeps a write state that a rebuild from the events reproduces', async () => {
    const m = await f.match();
    await send(m, m.a, { content: 'state' });
    const dump = async () =>
      sql(
        f.orm.em.fork(),
        `select (select jsonb_agg(c order by id) from conversations.conversations c) as c,
                (select jsonb_agg(m order by id) from conversations.messages m) as m,
                (select jsonb_agg(a order by id) from conversations.attachments a) as a`,
      );
    const before = await dump();
    const n = await f.orm.em.fork().transactional((em) => rebuildWriteState(em, f.ctx.store));
    expect(n).toBeGreaterThan(0);
    expect(await dump()).toEqual(before);
  });
});
