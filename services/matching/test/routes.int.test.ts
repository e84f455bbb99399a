import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalCommandHeaders, signOanJwt } from '@oan/auth';
import { sql } from '@oan/db';
import { API_KEY_PERMISSIONS } from '@oan/protocol';
import { runThreadCommand } from '../src/commands/context.ts';
import { WRITE_SOURCE } from '../src/commands/writes.ts';
import { NOT_WAITING_FOR_CONFIRMATION } from '../src/domain/errors.ts';
import { proposePairing } from '../src/commands/threadIds.ts';
import { conversationIdFor, matchIdFor } from '../src/domain/ids.ts';
import { body, expectError } from '@oan/testing';
import { JWT_SECRET, startMatchingFleet, type MatchingFleet } from './helpers.ts';

let fleet: MatchingFleet;
beforeAll(async () => {
  fleet = await startMatchingFleet();
});
afterAll(async () => fleet?.close());

type Headers = Record<string, string>;
type App = MatchingFleet['app'];
const api = (
  method: 'GET' | 'POST',
  url: string,
  headers: Headers,
  payload?: unknown,
  app: App = fleet.app,
) =>
  app.inject({
    method,
    url: `/api/v1${url}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

const confirm = (threadId: string, who: { goferId: string; headers: Headers }, accepted = true) =>
  api('POST', `/threads/${threadId}/pair/confirm`, who.headers, { roleId: who.goferId, accepted });
const getThread = async (threadId: string, h: Headers) => {
  const res = await api('GET', `/threads/${threadId}`, h);
  expect(res.statusCode).toBe(200);
  return body<{
    id: string;
    status: string;
    mode: string;
    participants: { roleId: string; isMine: boolean }[];
  }>(res);
};
const requestMatch = (threadId: string, who: { goferId: string; headers: Headers }) =>
  api('POST', '/match-requests', who.headers, { threadId, roleId: who.goferId });
const decide = (requestId: string, h: Headers, accept = true) =>
  api('POST', `/match-requests/${requestId}/decision`, h, { accept });

interface MatchStatus {
  status: string;
  counterpart: { id: string; name: string; avatarUrl: string | null };
  pendingRequestId: string | null;
  matchId: string | null;
  conversationId: string | null;
}

/** A thread both sides confirmed (or auto-paired): ready for match requests. */
async function activeThread() {
  const t = await fleet.pair('auto');
  expect((await getThread(t.threadId, t.a.headers)).status).toBe('active');
  return t;
}

const NOT_WAITING = { error: NOT_WAITING_FOR_CONFIRMATION, code: 'BAD_REQUEST' };

describe('pair/confirm: the literal not-waiting 400 and the {ok, threadId, accepted} body', () => {
  it('activates the thread when both sides accept; a second confirm is the literal 400', async () => {
    const { threadId, a, b } = await fleet.pair('confirm');
    expect((await getThread(threadId, a.headers)).status).toBe('awaiting_confirmation');

    const first = await confirm(threadId, a);
    expect(first.statusCode).toBe(200);
    expect(body(first)).toEqual({ ok: true, threadId, accepted: true });
    expect((await getThread(threadId, b.headers)).status).toBe('awaiting_confirmation');
    // The same side again: it already answered.
    const again = await confirm(threadId, a);
    expect(again.statusCode).toBe(400);
    expect(body(again)).toEqual(NOT_WAITING);

    expect((await confirm(threadId, b)).statusCode).toBe(200);
    expect((await getThread(threadId, a.headers)).status).toBe('active');
    for (const side of [a, b]) {
      const res = await confirm(threadId, side);
      expect(res.statusCode).toBe(400);
      expect(body(res)).toEqual(NOT_WAITING);
    }
    expect((await fleet.events(threadId)).map((e) => e.type)).toEqual([
      'ThreadProposed',
      'PairingConfirmed',
      'PairingConfirmed',
      'ThreadActivated',
    ]);
  });

  it('answers a confirm on an auto-paired thread with the literal 400', async () => {
    const { threadId, a } = await fleet.pair('auto');
    for (const accepted of [true, false]) {
      const res = await confirm(threadId, a, accepted);
      expect(res.statusCode).toBe(400);
      expect(body(res)).toEqual(NOT_WAITING);
    }
  });

  it('closes the thread when one side rejects; the other side’s confirm is then the literal 400', async () => {
    const { threadId, a, b } = await fleet.pair('confirm');
    const res = await confirm(threadId, b, false);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({ ok: true, threadId, accepted: false });
    expect((await getThread(threadId, a.headers)).status).toBe('closed');
    expect(body(await confirm(threadId, a))).toEqual(NOT_WAITING);
    expect((await fleet.events(threadId)).at(-1)).toMatchObject({
      type: 'ThreadClosed',
      data: { reason: 'rejected', goferId: b.goferId, accountId: b.accountId },
    });
  });
});

describe('pair/confirm and a decision sent by an internal call with a command id', () => {
  const once = (h: Headers) => ({
    ...h,
    ...internalCommandHeaders(JWT_SECRET, `runtimes:${randomUUID()}:1`),
  });

  it('confirms once however often it is sent, answering alike (a second plain confirm is the 400)', async () => {
    const { threadId, a } = await fleet.pair('confirm');
    const headers = once(a.headers);
    const sent = () =>
      api('POST', `/threads/${threadId}/pair/confirm`, headers, { roleId: a.goferId, accepted: true });
    const answers = [...(await Promise.all([sent(), sent()])), await sent()];
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(answers[0]!.body);
    }
    expect(body(await confirm(threadId, a))).toEqual(NOT_WAITING);
    expect((await fleet.events(threadId)).map((e) => e.type)).toEqual(['ThreadProposed', 'PairingConfirmed']);
  });

  it('decides a match request once however often it is sent, answering alike', async () => {
    const { threadId, a, b } = await activeThread();
    const requestId = body<MatchStatus>(await requestMatch(threadId, a)).pendingRequestId!;
    const headers = once(b.headers);
    const sent = () => api('POST', `/match-requests/${requestId}/decision`, headers, { accept: true });
    const answers = [...(await Promise.all([sent(), sent()])), await sent()];
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(answers[0]!.body);
    }
    expect(body(answers[0]!)).toMatchObject({ ok: true, status: 'accepted' });
    expect(
      (await fleet.events(threadId)).map((e) => e.type).filter((t) => t === 'MatchRequestDecided'),
    ).toHaveLength(1);
  });
});

describe('threads reads: the thread list and the paged transcript', () => {
  it('lists the caller’s threads, newest first, with both participants labelled', async () => {
    const caller = await fleet.account();
    expect(body(await api('GET', '/threads', caller.headers))).toEqual([]);
    const t = await fleet.pair('confirm');
    const res = await api('GET', '/threads', t.a.headers);
    expect(res.statusCode).toBe(200);
    const list =
      body<{ id: string; participants: { roleId: string; name: string; isMine: boolean }[] }[]>(res);
    expect(list).toEqual([
      {
        id: t.threadId,
        status: 'awaiting_confirmation',
        mode: 'confirm',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        participants: [
          { roleId: t.a.goferId, name: t.a.name, isMine: true },
          { roleId: t.b.goferId, name: t.b.name, isMine: false },
        ],
      },
    ]);
    expect(await getThread(t.threadId, t.b.headers)).toEqual({
      ...list[0],
      participants: list[0]!.participants.map((p) => ({ ...p, isMine: !p.isMine })),
    });
    expect(body(await api('GET', '/threads', caller.headers))).toEqual([]);
  });

  it('pages the caller’s threads with limit and offset, newest first, each status as its stream says', async () => {
    const me = await fleet.account();
    const propose = async (mode: 'confirm' | 'auto') => {
      const other = await fleet.account();
      const [mine, theirs] = [randomUUID(), randomUUID()];
      const side = (goferId: string, accountId: string) => ({
        goferId,
        accountId,
        name: 'N',
        sourcePlatform: 'dsh',
      });
      const { threadId } = await proposePairing(fleet.ctx, {
        mode,
        sides: [side(mine, me.accountId), side(theirs, other.accountId)],
        score: 0.6,
      });
      return { threadId, mine, theirs, other };
    };
    const waiting = await propose('confirm');
    const rejected = await propose('confirm');
    await runThreadCommand(fleet.ctx, rejected.threadId, {
      type: 'ConfirmPairing',
      data: { goferId: rejected.theirs, accountId: rejected.other.accountId, accepted: false },
    });
    const talked = await propose('auto');
    for (let turnIndex = 0; turnIndex < 4; turnIndex++)
      await runThreadCommand(fleet.ctx, talked.threadId, {
        type: 'AddSessionTurn',
        data: { turnIndex, senderGoferId: turnIndex % 2 ? talked.theirs : talked.mine, content: 'hi' },
      });
    await runThreadCommand(fleet.ctx, talked.threadId, { type: 'EndSession', data: {} });

    const all = body<{ id: string; status: string; createdAt: string }[]>(
      await api('GET', '/threads', me.headers),
    );
    const newestFirst = [...all].sort(
      (x, y) => y.createdAt.localeCompare(x.createdAt) || x.id.localeCompare(y.id),
    );
    expect(all).toEqual(newestFirst);
    expect(Object.fromEntries(all.map((t) => [t.id, t.status]))).toEqual({
      [waiting.threadId]: 'awaiting_confirmation',
      [rejected.threadId]: 'closed',
      [talked.threadId]: 'session_ended',
    });
    expect(body(await api('GET', '/threads?limit=2', me.headers))).toEqual(all.slice(0, 2));
    expect(body(await api('GET', '/threads?limit=2&offset=2', me.headers))).toEqual(all.slice(2));
    expect(body(await api('GET', '/threads?offset=3', me.headers))).toEqual([]);
  });

  it.each(['limit=0', 'limit=501', 'limit=abc', 'offset=-1', 'offset=1.5'])(
    'answers GET /threads?%s with 400 VALIDATION_ERROR',
    async (query) => {
      const me = await fleet.account();
      expectError(await api('GET', `/threads?${query}`, me.headers), 400, 'VALIDATION_ERROR');
    },
  );

  it('pages the transcript in turn order with limit and offset, senders labelled', async () => {
    const { threadId, a, b } = await activeThread();
    const senders = [a, b, a, b, a];
    for (const [turnIndex, s] of senders.entries()) {
      await runThreadCommand(fleet.ctx, threadId, {
        type: 'AddSessionTurn',
        data: { turnIndex, senderGoferId: s.goferId, content: `turn ${turnIndex}` },
      });
    }
    const page = async (query: string, h = a.headers) => {
      const res = await api('GET', `/threads/${threadId}/messages${query}`, h);
      expect(res.statusCode).toBe(200);
      return body<{ id: string; roleId: string; isMine: boolean; content: string; createdAt: string }[]>(res);
    };
    const all = await page('');
    expect(all.map((m) => [m.content, m.roleId, m.isMine])).toEqual(
      senders.map((s, i) => [`turn ${i}`, s.goferId, s === a]),
    );
    expect(Object.keys(all[0]!).sort()).toEqual(['content', 'createdAt', 'id', 'isMine', 'roleId']);
    expect((await page('?limit=2&offset=1')).map((m) => m.content)).toEqual(['turn 1', 'turn 2']);
    expect(await page('?offset=9')).toEqual([]);
    expect((await page('', b.headers)).map((m) => m.isMine)).toEqual([false, true, false, true, false]);
    for (const q of ['?limit=0', '?limit=201', '?limit=x', '?offset=-1']) {
      expectError(await api('GET', `/threads/${threadId}/messages${q}`, a.headers), 400, 'VALIDATION_ERROR');
    }
  });
});

describe('threads ownership and auth (404 unknown, 403 foreign, no realm gate, API-key permissions)', () => {
  it('answers an unknown thread 404 and a foreign one 403 on every threads route', async () => {
    const { threadId, a } = await fleet.pair('confirm');
    const stranger = await fleet.account();
    const routes = (id: string, roleId: string) =>
      [
        ['GET', `/threads/${id}`, undefined],
        ['GET', `/threads/${id}/messages`, undefined],
        ['POST', `/threads/${id}/pair/confirm`, { roleId, accepted: true }],
      ] as const;
    const before = await fleet.eventCount();
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not a uuid', 'x'.repeat(90)]) {
      for (const [method, url, payload] of routes(encodeURIComponent(id), a.goferId)) {
        expectError(await api(method, url, a.headers, payload), 404, 'NOT_FOUND');
      }
    }
    // A stranger with its own Gofer id, and with the participant's: 403, and nothing appended.
    for (const roleId of [a.goferId, 'stranger-gofer']) {
      for (const [method, url, payload] of routes(threadId, roleId)) {
        expectError(await api(method, url, stranger.headers, payload), 403, 'FORBIDDEN');
      }
    }
    expect(await fleet.eventCount()).toBe(before);
  });

  it('refuses a participant confirming with the counterpart’s roleId (403)', async () => {
    const { threadId, a, b } = await fleet.pair('confirm');
    const res = await api('POST', `/threads/${threadId}/pair/confirm`, a.headers, {
      roleId: b.goferId,
      accepted: true,
    });
    expectError(res, 403, 'FORBIDDEN');
    expect((await getThread(threadId, b.headers)).status).toBe('awaiting_confirmation');
  });

  it('accepts JWTs of either realm (no realm gate), unlike /match-requests', async () => {
    const { threadId, a } = await fleet.pair('auto');
    const legacy = await fleet.account({ realm: 'gofers' });
    const legacyJwt = await signOanJwt(JWT_SECRET, {
      accountId: legacy.accountId,
      realm: 'gofers',
      ttlSeconds: 60,
    });
    const oanJwt = await signOanJwt(JWT_SECRET, { accountId: a.accountId, ttlSeconds: 60 });
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    expect((await api('GET', '/threads', bearer(legacyJwt))).statusCode).toBe(200);
    expectError(await api('GET', `/threads/${threadId}`, bearer(legacyJwt)), 403, 'FORBIDDEN');
    expect((await getThread(threadId, bearer(oanJwt))).id).toBe(threadId);
    const gated = await api('POST', '/match-requests', bearer(legacyJwt), { threadId, roleId: a.goferId });
    expect(expectError(gated, 403, 'FORBIDDEN').error).toBe('errors.realmNotAllowed');
  });

  it('needs the route’s API key permission (403 without it) and a credential (401)', async () => {
    const { threadId, a } = await fleet.pair('confirm');
    const only = (p: string) => fleet.account({ permissions: API_KEY_PERMISSIONS.filter((x) => x !== p) });
    const noRead = await only('thread:read');
    const noMessages = await only('message:read');
    const noConfirm = await only('pair:confirm');
    const noQuery = await only('pair:query');
    expectError(await api('GET', '/threads', noRead.headers), 403, 'FORBIDDEN');
    expectError(await api('GET', `/threads/${threadId}`, noRead.headers), 403, 'FORBIDDEN');
    expectError(await api('GET', `/threads/${threadId}/messages`, noMessages.headers), 403, 'FORBIDDEN');
    const confirmBody = { roleId: a.goferId, accepted: true };
    expectError(
      await api('POST', `/threads/${threadId}/pair/confirm`, noConfirm.headers, confirmBody),
      403,
      'FORBIDDEN',
    );
    expectError(
      await api('POST', '/match-requests', noQuery.headers, { threadId, roleId: 'x' }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await api('POST', '/match-requests/x/decision', noConfirm.headers, { accept: true }),
      403,
      'FORBIDDEN',
    );
    const creds: Headers[] = [{}, { authorization: 'Bearer gofers_deadbeef' }];
    for (const h of creds) {
      expectError(await api('GET', '/threads', h), 401, 'UNAUTHORIZED');
      expectError(
        await api('POST', '/match-requests', h, { threadId, roleId: a.goferId }),
        401,
        'UNAUTHORIZED',
      );
    }
  });

  it('has no route at all with ENABLE_OPEN_API off', async () => {
    const off = await fleet.buildAnother({ ENABLE_OPEN_API: 'false' });
    const { threadId, a } = await fleet.pair('confirm');
    expectError(await api('GET', '/threads', a.headers, undefined, off), 404, 'NOT_FOUND');
    expectError(
      await api('POST', '/match-requests', a.headers, { threadId, roleId: a.goferId }, off),
      404,
      'NOT_FOUND',
    );
  });
});

describe('match requests: decisions are accepted or rejected, probe-safe refusals', () => {
  it('requests (201 outgoing_pending), the counterpart accepts with the thread’s ids, a second decision is 400', async () => {
    const { threadId, a, b } = await activeThread();
    const res = await requestMatch(threadId, a);
    expect(res.statusCode).toBe(201);
    const status = body<MatchStatus>(res);
    expect(status).toEqual({
      status: 'outgoing_pending',
      counterpart: { id: b.accountId, name: b.name, avatarUrl: null },
      pendingRequestId: expect.any(String),
      matchId: null,
      conversationId: null,
    });
    const requestId = status.pendingRequestId!;
    // The recipient sees it as incoming; asking again by the requester changes nothing.
    const again = body<MatchStatus>(await requestMatch(threadId, a));
    expect(again).toEqual(status);

    const decided = await decide(requestId, b.headers);
    expect(decided.statusCode).toBe(200);
    const ids = { matchId: matchIdFor(threadId), conversationId: conversationIdFor(threadId) };
    expect(body(decided)).toEqual({ ok: true, status: 'accepted', ...ids });

    for (const accept of [true, false]) {
      expect(expectError(await decide(requestId, b.headers, accept), 400, 'BAD_REQUEST').error).toMatch(
        /already decided/,
      );
    }
    // Repeated after the match, by either side: 201 matched with the same ids.
    for (const side of [a, b]) {
      const repeat = await requestMatch(threadId, side);
      expect(repeat.statusCode).toBe(201);
      expect(body<MatchStatus>(repeat)).toMatchObject({ status: 'matched', pendingRequestId: null, ...ids });
    }
    expect((await fleet.events(threadId)).map((e) => e.type).slice(2)).toEqual([
      'MatchRequested',
      'MatchRequestDecided',
    ]);
  });

  it('rejects with null matchId and conversationId; the requester may ask again', async () => {
    const { threadId, a, b } = await activeThread();
    const { pendingRequestId } = body<MatchStatus>(await requestMatch(threadId, a));
    const res = await decide(pendingRequestId!, b.headers, false);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toEqual({ ok: true, status: 'rejected', matchId: null, conversationId: null });
    const next = body<MatchStatus>(await requestMatch(threadId, a));
    expect(next.status).toBe('outgoing_pending');
    expect(next.pendingRequestId).not.toBe(pendingRequestId);
  });

  it('answers a stranger, the requester and an unknown request id with one byte-identical 403', async () => {
    const { threadId, a, b } = await activeThread();
    const stranger = await fleet.account();
    const { pendingRequestId } = body<MatchStatus>(await requestMatch(threadId, a));
    const before = await fleet.eventCount();
    const refusals = [
      await decide(pendingRequestId!, stranger.headers),
      await decide(pendingRequestId!, a.headers),
      await decide('00000000-0000-4000-8000-000000000000', b.headers),
      await decide(encodeURIComponent('not an id'), b.headers),
    ];
    for (const r of refusals) {
      expectError(r, 403, 'FORBIDDEN');
      expect(r.body).toBe(refusals[0]!.body);
    }
    // Once decided, a stranger still learns nothing (403, not the 400 the recipient gets).
    expect((await decide(pendingRequestId!, b.headers)).statusCode).toBe(200);
    const late = await decide(pendingRequestId!, stranger.headers);
    expect(late.statusCode).toBe(403);
    expect(late.body).toBe(refusals[0]!.body);
    expect(await fleet.eventCount()).toBe(before + 1);
  });

  it('ends in one match when both sides request at once', async () => {
    for (let round = 0; round < 3; round++) {
      const { threadId, a, b } = await activeThread();
      const answers = await Promise.all([requestMatch(threadId, a), requestMatch(threadId, b)]);
      for (const r of answers) expect(r.statusCode).toBe(201);
      const statuses = answers.map((r) => body<MatchStatus>(r).status).sort();
      // The later request accepted the earlier one (cross request): that caller sees the match.
      expect(statuses).toEqual(['matched', 'outgoing_pending']);
      const events = await fleet.events(threadId);
      expect(events.filter((e) => e.type === 'MatchRequested')).toHaveLength(1);
      const decisions = events.filter((e) => e.type === 'MatchRequestDecided');
      expect(decisions).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({ status: 'accepted', decidedBy: 'cross_request' }),
        }),
      ]);
      const ids = { matchId: matchIdFor(threadId), conversationId: conversationIdFor(threadId) };
      for (const side of [a, b]) {
        expect(body<MatchStatus>(await requestMatch(threadId, side))).toMatchObject({
          status: 'matched',
          ...ids,
        });
      }
    }
  });

  it('answers 404 for an unknown thread, a stranger, and a roleId that is not the caller’s', async () => {
    const { threadId, a, b } = await activeThread();
    const stranger = await fleet.account();
    const before = await fleet.eventCount();
    const refusals = [
      await api('POST', '/match-requests', a.headers, {
        threadId: '00000000-0000-4000-8000-000000000000',
        roleId: a.goferId,
      }),
      await api('POST', '/match-requests', a.headers, { threadId: 'not an id', roleId: a.goferId }),
      await api('POST', '/match-requests', stranger.headers, { threadId, roleId: a.goferId }),
      await api('POST', '/match-requests', stranger.headers, { threadId, roleId: 'stranger-gofer' }),
      await api('POST', '/match-requests', a.headers, { threadId, roleId: b.goferId }),
    ];
    for (const r of refusals) {
      expectError(r, 404, 'NOT_FOUND');
      expect(r.body).toBe(refusals[0]!.body);
    }
    expect(await fleet.eventCount()).toBe(before);
  });

  it('refuses a request on a thread that is not active yet (400 BAD_REQUEST)', async () => {
    const { threadId, a } = await fleet.pair('confirm');
    expectError(await requestMatch(threadId, a), 400, 'BAD_REQUEST');
  });
});

describe('bad input: malformed bodies are 400 {error, code}', () => {
  it('answers 400 {error, code} and appends nothing', async () => {
    const { threadId, a, b } = await activeThread();
    const { pendingRequestId } = body<MatchStatus>(await requestMatch(threadId, a));
    const before = await fleet.eventCount();
    const cases: [string, unknown][] = [
      [`/threads/${threadId}/pair/confirm`, {}],
      [`/threads/${threadId}/pair/confirm`, { roleId: a.goferId }],
      [`/threads/${threadId}/pair/confirm`, { roleId: a.goferId, accepted: 'yes' }],
      [`/threads/${threadId}/pair/confirm`, { roleId: 5, accepted: true }],
      ['/match-requests', {}],
      ['/match-requests', { threadId }],
      ['/match-requests', { threadId: 1, roleId: a.goferId }],
      ['/match-requests', { threadId, roleId: 'x'.repeat(200) }],
      ['/match-requests', []],
      [`/match-requests/${pendingRequestId}/decision`, {}],
      [`/match-requests/${pendingRequestId}/decision`, { accept: 'true' }],
    ];
    for (const [url, payload] of cases) {
      const who = url.includes('decision') ? b : a;
      expectError(await api('POST', url, who.headers, payload), 400, 'VALIDATION_ERROR');
    }
    const notJson = await fleet.app.inject({
      method: 'POST',
      url: '/api/v1/match-requests',
      headers: { ...a.headers, 'content-type': 'application/json' },
      payload: '{"threadId":',
    });
    expectError(notJson, 400, 'REQUEST_ERROR');
    expect(await fleet.eventCount()).toBe(before);
  });
});

describe('write side (docs/adr/0012, read-your-writes)', () => {
  it('keeps the lookups inline and records read-your-writes under the thread’s key account', async () => {
    const { threadId, a, b } = await activeThread();
    const gofers = await sql<{ gofer_id: string; account_id: string }>(
      fleet.orm.em.fork(),
      'select gofer_id, account_id from matching.gofer_threads where thread_id = ? order by gofer_id',
      [threadId],
    );
    expect(gofers).toEqual([
      { gofer_id: a.goferId, account_id: a.accountId },
      { gofer_id: b.goferId, account_id: b.accountId },
    ]);
    // b (not the key account) requests: its write is remembered under a's key, mapped for b.
    const { pendingRequestId } = body<MatchStatus>(await requestMatch(threadId, b));
    const [lookup] = await sql<{ thread_id: string }>(
      fleet.orm.em.fork(),
      'select thread_id from matching.request_threads where request_id = ?',
      [pendingRequestId],
    );
    expect(lookup?.thread_id).toBe(threadId);
    const keyPosition = await fleet.ctx.writes.tracker.required(a.accountId, WRITE_SOURCE);
    expect(keyPosition).toBeGreaterThan(0n);
    expect(await fleet.ctx.writes.tracker.required(b.accountId, WRITE_SOURCE)).toBe(0n);
    expect(await fleet.ctx.writes.requiredByKey(b.accountId)).toEqual(new Map([[a.accountId, keyPosition]]));
    expect(await fleet.ctx.writes.requiredByKey(a.accountId)).toEqual(new Map());
  });
});
