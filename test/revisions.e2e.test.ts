import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { REPO_ROOT, TestFleet, waitFor, type TestConnector } from '@oan/testing';
import {
  corrupt,
  dumpEventTable,
  dumpTables,
  matchTwoAccounts,
  matchTwoAccountsSaying,
  WEDDING,
  type Answer,
  type Match,
} from './support.ts';

/**
 * Corrections and retractions of direct messages through the edge (docs/sealed-messages.md
 * "Revisions", ADR 0037), as two connectors see them: the other side's socket, both histories, the
 * limits (the clock moved by the QA knob), DELETE as the retraction, deleted files, a replay, and a
 * conversation that never revises reading exactly as protocol v1 does.
 */

interface Message {
  id: string;
  senderUserId: string;
  content: string;
  attachments: { attachmentId: string }[];
  changeSequence: string;
  createdAt: string;
  revision?: { state: string; count: number; at: string };
}

const HOUR = 3600_000;
let fleet: TestFleet;
let m: Match;
let plain: Match;
let redis: Redis;

beforeAll(async () => {
  fleet = await TestFleet.start({ env: { CONVERSATIONS_QA_CLOCK: 'redis' } });
  redis = new Redis(fleet.env.REDIS_URL!);
  [m, plain] = await Promise.all([
    matchTwoAccounts(fleet, ['rev-team', 'rev-eng']),
    matchTwoAccountsSaying(fleet, ['rev-couple', 'rev-lens'], WEDDING),
  ]);
});
afterAll(async () => {
  for (const x of [m, plain]) {
    x?.ca.close();
    x?.cb.close();
  }
  redis?.disconnect();
  await fleet?.stop();
});

/** The QA knob (CONVERSATIONS_QA_CLOCK=redis): every conversations command's clock, moved. */
const moveClock = (ms: number) => redis.set(`${fleet.env.REDIS_PREFIX}qa:clock-offset-ms`, String(ms));

const path = (x: Match, rest = '') => `/conversations/${x.conversationId}${rest}`;
const send = async (x: Match, c: TestConnector, body: object) => {
  const res = await c.rest<Message>('POST', path(x, '/messages'), body);
  expect(res.status, res.text).toBe(201);
  return res.body;
};
const revise = (c: TestConnector, id: string, body: object, x: Match = m) =>
  c.rest<Message>('POST', path(x, `/messages/${id}/revise`), body);
const correct = (c: TestConnector, id: string, content: string, clientMessageId: string = randomUUID()) =>
  revise(c, id, { action: 'correct', clientMessageId, content });
const history = async (c: TestConnector, x: Match = m) => {
  const res = await c.rest<Message[]>('GET', path(x, '/messages?limit=200'));
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const relays = (c: TestConnector, x: Match = m) =>
  c.pushes.filter((e) => e.type === 'relay_message' && e.conversationId === x.conversationId);
const relayOf = (c: TestConnector, messageId: string) =>
  waitFor(() => relays(c).find((e) => e.payload.messageId === messageId), {
    timeoutMs: 30_000,
    what: `the relay_message ${messageId}`,
  });
const revisionRelay = (c: TestConnector, messageId: string, action: string) =>
  waitFor(
    () =>
      relays(c).find((e) => {
        const r = e.payload.revision as { messageId?: string; action?: string } | undefined;
        return r?.messageId === messageId && r.action === action;
      }),
    { timeoutMs: 30_000, what: `the ${action} of ${messageId} relayed` },
  );
const expectCode = (res: Answer, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(JSON.parse(res.text)).toEqual({ error: expect.any(String), code });
};
/** What the other side's REST backfill holds for the conversation, as stored (every page). */
async function backfill(c: TestConnector): Promise<OanEventEnvelope[]> {
  const all: OanEventEnvelope[] = [];
  for (let since = '0'; ;) {
    const res = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${since}&limit=200`);
    expect(res.status, res.text).toBe(200);
    if (res.body.length === 0) break;
    all.push(...res.body);
    since = res.body.at(-1)!.seq;
  }
  return all.filter((e) => e.type === 'relay_message' && e.conversationId === m.conversationId);
}
async function upload(key: string, name: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([`${name} ${randomUUID()}\n`], { type: 'text/plain' }), name);
  const res = await fetch(`${fleet.url}/api/v1${path(m, '/attachments')}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { attachment: { attachmentId: string } }).attachment.attachmentId;
}

describe('a correction', () => {
  it('reaches the other side’s socket as a relay_message of its own; both histories show the message corrected', async () => {
    const sent = await send(m, m.ca, { content: 'Shall we talk at 10?' });
    await relayOf(m.cb, sent.id);
    const res = await correct(m.ca, sent.id, 'Shall we talk at 11?');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      ...sent,
      content: 'Shall we talk at 11?',
      revision: { state: 'corrected', count: 1, at: expect.any(String) },
    });
    const relay = await revisionRelay(m.cb, sent.id, 'correct');
    expect(relay).toEqual({
      v: 1,
      seq: relay.seq,
      eventId: expect.any(String),
      type: 'relay_message',
      conversationId: m.conversationId,
      source: 'counterpart_party',
      reply: { method: 'POST', path: `/api/v1/conversations/${m.conversationId}/messages` },
      payload: {
        messageId: expect.any(String),
        content: '[correction] Shall we talk at 11?',
        createdAt: res.body.revision!.at,
        revision: { messageId: sent.id, action: 'correct', count: 1 },
      },
      createdAt: res.body.revision!.at,
    });
    // A new messageId: a client that drops ids it has seen keeps the correction.
    expect(relay.payload.messageId).not.toBe(sent.id);
    const item = (x: Message[]) => x.find((msg) => msg.id === sent.id);
    expect(item(await history(m.ca))).toEqual(res.body);
    await waitFor(async () => item(await history(m.cb))?.revision !== undefined, { what: 'b’s history' });
    expect(item(await history(m.cb))).toEqual(res.body);
    expect(relays(m.ca).filter((e) => JSON.stringify(e).includes(sent.id))).toEqual([]);
  });
});

describe('a retraction', () => {
  it('empties the message, takes it out of both histories, scrubs its relays and deletes its files', async () => {
    const [doomed, kept] = [await upload(m.a.apiKey, 'doomed.txt'), await upload(m.a.apiKey, 'kept.txt')];
    const sent = await send(m, m.ca, { content: 'my private number is 555', attachmentIds: [doomed] });
    const other = await send(m, m.ca, { content: 'see the file', attachmentIds: [kept] });
    await relayOf(m.cb, other.id);
    const fixed = await correct(m.ca, sent.id, 'my private number is 556');
    expect(fixed.body.attachments.map((a) => a.attachmentId)).toEqual([doomed]);
    await revisionRelay(m.cb, sent.id, 'correct');
    const signed = (id: string) => m.cb.rest<{ url: string }>('GET', path(m, `/attachments/${id}/url`));
    const url = (await signed(doomed)).body.url;
    expect((await fetch(url)).status).toBe(200);

    const res = await revise(m.ca, sent.id, { action: 'retract', clientMessageId: 'gone-1' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      ...sent,
      content: '',
      attachments: [],
      revision: { state: 'retracted', count: 1, at: expect.any(String) },
    });
    const relay = await revisionRelay(m.cb, sent.id, 'retract');
    expect(relay.payload).toEqual({
      messageId: expect.any(String),
      content: '[retracted] The other side withdrew a message.',
      createdAt: res.body.revision!.at,
      revision: { messageId: sent.id, action: 'retract', count: 1 },
    });
    expect((await history(m.ca)).map((x) => x.id)).not.toContain(sent.id);
    await waitFor(async () => !(await history(m.cb)).some((x) => x.id === sent.id), { what: 'b’s history' });
    // The files go (their signed URL too), the other message's stay.
    expectCode(await signed(doomed), 404, 'NOT_FOUND');
    expect((await fetch(url)).status).toBe(404);
    expect((await signed(kept)).status).toBe(200);
    // What the other side can read back holds none of it.
    const stored = await backfill(m.cb);
    expect(JSON.stringify(stored)).not.toMatch(/private number|doomed\.txt/);
    expect(stored.find((e) => e.payload.messageId === sent.id)!.payload).toEqual({
      messageId: sent.id,
      content: '',
      createdAt: sent.createdAt,
    });
    // The retry answers the same; anything else finds nothing.
    expect((await revise(m.ca, sent.id, { action: 'retract', clientMessageId: 'gone-1' })).text).toBe(
      res.text,
    );
    expectCode(await correct(m.ca, sent.id, 'back?'), 404, 'MESSAGE_NOT_FOUND');
  });

  it('is what DELETE does too, still answered 204', async () => {
    const sent = await send(m, m.ca, { content: 'delete me' });
    expectCode(await m.cb.rest('DELETE', path(m, `/messages/${sent.id}`)), 403, 'FORBIDDEN');
    const del = await m.ca.rest('DELETE', path(m, `/messages/${sent.id}`));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectCode(await m.ca.rest('DELETE', path(m, `/messages/${sent.id}`)), 404, 'NOT_FOUND');
    const relay = await revisionRelay(m.cb, sent.id, 'retract');
    expect(relay.payload).toMatchObject({ content: '[retracted] The other side withdrew a message.' });
    expect((await history(m.ca)).map((x) => x.id)).not.toContain(sent.id);
  });
});

describe('the limits', () => {
  it('ten corrections, then 409 REVISION_LIMIT; one clientMessageId is one revision', async () => {
    const sent = await send(m, m.ca, { content: 'draft 0' });
    const first = await correct(m.ca, sent.id, 'draft 1', 'draft-1');
    expect((await correct(m.ca, sent.id, 'draft 1', 'draft-1')).text).toBe(first.text);
    expectCode(await correct(m.ca, sent.id, 'draft one', 'draft-1'), 409, 'CLIENT_MESSAGE_ID_REUSED');
    for (let i = 2; i <= 10; i++)
      expect((await correct(m.ca, sent.id, `draft ${i}`)).body.revision?.count).toBe(i);
    expectCode(await correct(m.ca, sent.id, 'draft 11'), 409, 'REVISION_LIMIT');
    expectCode(await correct(m.cb, sent.id, 'not mine'), 403, 'MESSAGE_NOT_YOURS');
    expect((await history(m.ca)).find((x) => x.id === sent.id)!.content).toBe('draft 10');
  });

  it('24 hours after createdAt the window is closed, for revise and DELETE (the clock moved, not slept)', async () => {
    const sent = await send(m, m.ca, { content: 'yesterday' });
    try {
      await moveClock(24 * HOUR - 60_000);
      expect((await correct(m.ca, sent.id, 'still today')).status).toBe(200);
      await moveClock(24 * HOUR + 60_000);
      expectCode(await correct(m.ca, sent.id, 'tomorrow'), 409, 'REVISION_WINDOW_CLOSED');
      expectCode(
        await revise(m.ca, sent.id, { action: 'retract', clientMessageId: randomUUID() }),
        409,
        'REVISION_WINDOW_CLOSED',
      );
      expectCode(await m.ca.rest('DELETE', path(m, `/messages/${sent.id}`)), 409, 'REVISION_WINDOW_CLOSED');
    } finally {
      await moveClock(0);
    }
    // Back on the real clock the message is inside its window again.
    expect((await correct(m.ca, sent.id, 'today again')).status).toBe(200);
  });
});

describe('a conversation that never revises', () => {
  it('reads exactly as protocol v1: the same history bytes and relay_message envelopes', async () => {
    const one = await send(plain, plain.ca, { content: 'Hello from the couple' });
    const two = await send(plain, plain.cb, { content: 'Hello from the lens' });
    const v1 = (x: Message) => ({
      id: x.id,
      senderUserId: x.senderUserId,
      content: x.content,
      attachments: [],
      changeSequence: x.changeSequence,
      createdAt: x.createdAt,
    });
    expect(Object.keys(one)).toEqual(Object.keys(v1(one)));
    for (const c of [plain.ca, plain.cb]) {
      await waitFor(async () => (await history(c, plain)).length === 2, { what: 'both messages' });
      const raw = await c.rest('GET', path(plain, '/messages'));
      expect(raw.text).toBe(JSON.stringify([v1(one), v1(two)]));
    }
    for (const [to, msg] of [
      [plain.cb, one],
      [plain.ca, two],
    ] as const) {
      const e = await waitFor(() => relays(to, plain).find((x) => x.payload.messageId === msg.id), {
        what: 'the relay',
      });
      expect(JSON.stringify(e)).toBe(
        JSON.stringify({
          v: 1,
          seq: e.seq,
          eventId: e.eventId,
          type: 'relay_message',
          conversationId: plain.conversationId,
          source: 'counterpart_party',
          reply: { method: 'POST', path: `/api/v1/conversations/${plain.conversationId}/messages` },
          payload: { messageId: msg.id, content: msg.content, createdAt: msg.createdAt },
          createdAt: msg.createdAt,
        }),
      );
    }
  });
});

describe('a replay', () => {
  it('rebuilds the read models and the scrubbed envelopes byte for byte', async () => {
    const db = fleet.env.DATABASE_URL!;
    const tables = ['read.conversation_messages', 'read.conversation_attachments', 'read.relay_message_seqs'];
    // Every revision so far is projected: the last one reached the other side.
    const last = await send(m, m.ca, { content: 'last words' });
    await correct(m.ca, last.id, 'last words, corrected');
    await revisionRelay(m.cb, last.id, 'correct');
    const before = await dumpTables(db, tables);
    const events = await dumpEventTable(db);
    expect(events.join('\n')).not.toContain('private number');
    await fleet.kill('projector');
    await corrupt(db, [
      `update read.oan_event set envelope = replace(envelope, '"content":""', '"content":"resurrected"')`,
      `update read.conversation_messages set content = 'resurrected', recalled_at = null`,
    ]);
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(db, tables)).toEqual(before);
    expect(await dumpEventTable(db)).toEqual(events);
    await fleet.restart('projector');
  });
});
