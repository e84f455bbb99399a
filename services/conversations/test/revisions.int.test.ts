import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body, expectError, form, waitFor } from '@oan/testing';
import { createConversationContext } from '../src/app.ts';
import { sendMessage } from '../src/commands/messages.ts';
import { rebuildWriteState } from '../src/infra/store.ts';
import { startConversationFleet, type ConversationFleet, type Match, type Res } from './helpers.ts';

interface Message {
  id: string;
  senderUserId: string;
  content: string;
  sealed?: unknown;
  attachments: { attachmentId: string }[];
  changeSequence: string;
  createdAt: string;
  revision?: { state: string; count: number; at: string };
}

const HOUR = 3600_000;
/** The commands' clock: real time moved by `shift` (the service's injected `now`). */
let shift = 0;
let f: ConversationFleet;
beforeAll(async () => {
  f = await startConversationFleet({}, { now: () => new Date(Date.now() + shift) });
}, 60_000);
afterAll(async () => {
  await f?.close();
});

type Who = { headers: Record<string, string> };
const base = (m: Pick<Match, 'conversationId'>) => `/api/v1/conversations/${m.conversationId}`;
const send = async (m: Match, who: Who, payload: object) =>
  body<Message>(
    await f.app.inject({ method: 'POST', url: `${base(m)}/messages`, headers: who.headers, payload }),
  );
const revise = (m: Pick<Match, 'conversationId'>, who: Who, messageId: string, payload: object) =>
  f.app.inject({
    method: 'POST',
    url: `${base(m)}/messages/${messageId}/revise`,
    headers: who.headers,
    payload,
  });
const correct = (
  m: Match,
  who: Who,
  messageId: string,
  content: string,
  clientMessageId: string = randomUUID(),
) => revise(m, who, messageId, { action: 'correct', clientMessageId, content });
const retract = (m: Match, who: Who, messageId: string, clientMessageId: string = randomUUID()) =>
  revise(m, who, messageId, { action: 'retract', clientMessageId });
const history = async (m: Match, who: Who) =>
  body<Message[]>(await f.app.inject({ method: 'GET', url: `${base(m)}/messages`, headers: who.headers }));
const relays = async (m: Match) =>
  (await f.envelopes(m.b.accountId)).filter((e) => e.type === 'relay_message') as {
    payload: Record<string, unknown>;
  }[];
const stored = async (m: Match) =>
  (await f.events()).filter((e) => e.data.conversationId === m.conversationId).map((e) => e.type);

describe('a correction of a plain message', () => {
  it('answers the message as history shows it with its revision; both histories and the other side see it', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'Meet at 10?' });
    const res = await correct(m, m.a, sent.id, 'Meet at 11?');
    expect(res.statusCode, res.body).toBe(200);
    const answer = body<Message>(res);
    expect(Object.keys(answer)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
      'revision',
    ]);
    expect(answer).toEqual({
      ...sent,
      content: 'Meet at 11?',
      revision: { state: 'corrected', count: 1, at: expect.stringMatching(/^\d{4}-.*Z$/) },
    });
    // Read-your-writes for the sender; the other side once the projector has it.
    expect(await history(m, m.a)).toEqual([answer]);
    await waitFor(async () => (await history(m, m.b))[0]?.content === 'Meet at 11?', { what: 'b sees it' });
    expect(await history(m, m.b)).toEqual([answer]);
    await waitFor(async () => (await relays(m)).length === 2, { what: 'the correction relayed' });
    const [, relay] = await relays(m);
    expect(JSON.stringify(relay!.payload)).toMatch(
      /^\{"messageId":"[^"]+","content":"\[correction\] Meet at 11\?"/,
    );
    expect(relay!.payload).toEqual({
      messageId: expect.not.stringMatching(sent.id),
      content: '[correction] Meet at 11?',
      createdAt: answer.revision!.at,
      revision: { messageId: sent.id, action: 'correct', count: 1 },
    });
    expect(await f.envelopes(m.a.accountId)).toEqual([]);
  });

  it('keeps unrevised messages free of any revision key', async () => {
    const m = await f.match();
    await send(m, m.a, { content: 'plain' });
    const [item] = await history(m, m.a);
    expect(Object.keys(item!)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
  });

  it('refuses the other side (403 MESSAGE_NOT_YOURS), unknown messages (404) and strangers (403)', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'mine' });
    const before = (await f.events()).length;
    expectError(await correct(m, m.b, sent.id, 'not yours'), 403, 'MESSAGE_NOT_YOURS');
    expectError(await correct(m, m.a, randomUUID(), 'nothing'), 404, 'MESSAGE_NOT_FOUND');
    expectError(await correct(m, m.a, 'not a valid id!', 'nothing'), 404, 'MESSAGE_NOT_FOUND');
    const third = await f.account();
    expectError(await correct(m, third, sent.id, 'let me in'), 403, 'FORBIDDEN');
    expectError(await correct({ ...m, conversationId: randomUUID() }, m.a, sent.id, 'x'), 403, 'FORBIDDEN');
    expect((await f.events()).length).toBe(before);
  });

  it('refuses malformed bodies with 400 and appends nothing', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'text' });
    const before = (await f.events()).length;
    const bad: object[] = [
      {},
      { action: 'correct', content: 'no id' },
      { action: 'correct', clientMessageId: '', content: 'x' },
      { action: 'correct', clientMessageId: 'x'.repeat(129), content: 'x' },
      { action: 'correct', clientMessageId: 'c' },
      { action: 'correct', clientMessageId: 'c', content: 'x', extra: 1 },
      { action: 'retract', clientMessageId: 'c', content: 'x' },
      { action: 'edit', clientMessageId: 'c', content: 'x' },
      { action: 'correct', clientMessageId: 'c', content: '   ' },
      { action: 'correct', clientMessageId: 'c', content: 'x'.repeat(20_001) },
      {
        action: 'correct',
        clientMessageId: 'c',
        sealed: sealed(1, { accountId: 'acc', keyId: randomUUID() }),
      },
    ];
    for (const payload of bad) expectError(await revise(m, m.a, sent.id, payload), 400, 'VALIDATION_ERROR');
    expect((await f.events()).length).toBe(before);
  });
});

describe('a clientMessageId', () => {
  it('answers a retry with the same 200, byte for byte, even after a later correction', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'v0' });
    const first = await correct(m, m.a, sent.id, 'v1', 'c-1');
    await correct(m, m.a, sent.id, 'v2', 'c-2');
    const again = await correct(m, m.a, sent.id, 'v1', 'c-1');
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(await stored(m)).toEqual([
      'ConversationOpened',
      'ConversationMessageSent',
      'ConversationMessageCorrected',
      'ConversationMessageCorrected',
    ]);
  });

  it('refuses another body, another message or another action under it with 409', async () => {
    const m = await f.match();
    const one = await send(m, m.a, { content: 'one' });
    const two = await send(m, m.a, { content: 'two' });
    expect((await correct(m, m.a, one.id, 'uno', 'c-x')).statusCode).toBe(200);
    expectError(await correct(m, m.a, one.id, 'eins', 'c-x'), 409, 'CLIENT_MESSAGE_ID_REUSED');
    expectError(await correct(m, m.a, two.id, 'uno', 'c-x'), 409, 'CLIENT_MESSAGE_ID_REUSED');
    expectError(await retract(m, m.a, one.id, 'c-x'), 409, 'CLIENT_MESSAGE_ID_REUSED');
    // Another sender's ids are its own.
    const theirs = await send(m, m.b, { content: 'b' });
    expect((await correct(m, m.b, theirs.id, 'bee', 'c-x')).statusCode).toBe(200);
  });

  it('sent twice at once applies once and answers both the same', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'race' });
    const answers = await Promise.all([1, 2, 3].map(() => correct(m, m.a, sent.id, 'raced', 'c-same')));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    expect((await stored(m)).filter((t) => t === 'ConversationMessageCorrected')).toHaveLength(1);
  });
});

describe('limits', () => {
  it('takes ten corrections, refuses the eleventh with 409 REVISION_LIMIT, and still takes a retraction', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'v0' });
    for (let i = 1; i <= 10; i++) {
      expect(body<Message>(await correct(m, m.a, sent.id, `v${i}`)).revision?.count).toBe(i);
    }
    expectError(await correct(m, m.a, sent.id, 'v11'), 409, 'REVISION_LIMIT');
    expect((await history(m, m.a))[0]!.content).toBe('v10');
    const gone = body<Message>(await retract(m, m.a, sent.id));
    expect(gone).toMatchObject({ content: '', attachments: [], revision: { state: 'retracted', count: 10 } });
  });

  it('racing corrections apply in order, none lost; the eleventh racing the tenth is refused', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'v0' });
    const two = await Promise.all([correct(m, m.a, sent.id, 'x'), correct(m, m.a, sent.id, 'y')]);
    expect(two.map((r) => body<Message>(r).revision?.count).sort()).toEqual([1, 2]);
    for (let i = 3; i <= 9; i++) expect((await correct(m, m.a, sent.id, `v${i}`)).statusCode).toBe(200);
    const last = await Promise.all([correct(m, m.a, sent.id, 'tenth?'), correct(m, m.a, sent.id, 'or me?')]);
    expect(last.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expectError(
      last.find((r) => r.statusCode === 409)!,
      409,
      'REVISION_LIMIT',
    );
    const counts = (await f.events())
      .filter((e) => e.type === 'ConversationMessageCorrected' && e.data.messageId === sent.id)
      .map((e) => e.data.count);
    expect(counts).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Fifteen at once on a fresh message: exactly ten, counted 1..10.
    const fresh = await send(m, m.a, { content: 'burst' });
    const burst = await Promise.all(Array.from({ length: 15 }, (_, i) => correct(m, m.a, fresh.id, `b${i}`)));
    expect(
      burst
        .filter((r) => r.statusCode === 200)
        .map((r) => body<Message>(r).revision!.count)
        .sort((x, y) => x - y),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(burst.filter((r) => r.statusCode === 409)).toHaveLength(5);
  });

  it('closes the window 24 hours after createdAt, for corrections, retractions and DELETE alike', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'old news' });
    try {
      shift = 24 * HOUR - 60_000;
      expect((await correct(m, m.a, sent.id, 'just in time')).statusCode).toBe(200);
      shift = 24 * HOUR + 1000;
      expectError(await correct(m, m.a, sent.id, 'too late'), 409, 'REVISION_WINDOW_CLOSED');
      expectError(await retract(m, m.a, sent.id), 409, 'REVISION_WINDOW_CLOSED');
      const del = await f.app.inject({
        method: 'DELETE',
        url: `${base(m)}/messages/${sent.id}`,
        headers: m.a.headers,
      });
      expectError(del, 409, 'REVISION_WINDOW_CLOSED');
      // A message sent on the moved clock has its own 24 hours.
      const later = await send(m, m.a, { content: 'new news' });
      expect((await correct(m, m.a, later.id, 'fine')).statusCode).toBe(200);
    } finally {
      shift = 0;
    }
  });
});

describe('a retraction', () => {
  it('empties the message, takes it out of both histories, scrubs what carried it and tells the other side', async () => {
    const m = await f.match();
    const keep = await send(m, m.a, { content: 'keep' });
    const sent = await send(m, m.a, { content: 'the secret' });
    await correct(m, m.a, sent.id, 'the secret, again');
    await waitFor(async () => (await relays(m)).length === 3, { what: 'three relays' });
    const res = await retract(m, m.a, sent.id, 'c-gone');
    expect(res.statusCode).toBe(200);
    expect(body<Message>(res)).toEqual({
      ...sent,
      content: '',
      attachments: [],
      revision: { state: 'retracted', count: 1, at: expect.any(String) },
    });
    // A retry answers the same; the message is gone for anything else.
    expect((await retract(m, m.a, sent.id, 'c-gone')).body).toBe(res.body);
    expectError(await retract(m, m.a, sent.id), 404, 'MESSAGE_NOT_FOUND');
    expectError(await correct(m, m.a, sent.id, 'back'), 404, 'MESSAGE_NOT_FOUND');
    expect((await history(m, m.a)).map((x) => x.id)).toEqual([keep.id]);
    await waitFor(async () => (await relays(m)).length === 4, { what: 'the retraction relayed' });
    const payloads = (await relays(m)).map((r) => r.payload);
    expect(JSON.stringify(payloads)).not.toContain('secret');
    expect(payloads[1]).toEqual({ messageId: sent.id, content: '', createdAt: sent.createdAt });
    expect(payloads[3]).toEqual({
      messageId: expect.any(String),
      content: '[retracted] The other side withdrew a message.',
      createdAt: body<Message>(res).revision!.at,
      revision: { messageId: sent.id, action: 'retract', count: 1 },
    });
    expect((await history(m, m.b)).map((x) => x.id)).toEqual([keep.id]);
    // The write side kept no text of it: the stored correction is stripped.
    const revisions = await sql<{ content: string }>(
      f.orm.em.fork(),
      'select content from conversations.revisions where message_id = ? order by count, at',
      [sent.id],
    );
    expect(revisions.map((r) => r.content)).toEqual(['', '']);
  });

  it('deletes its files (URL 404, bytes gone) but not those of other messages', async () => {
    const m = await f.match();
    const up = async (name: string) => {
      const file = form(name, 'text/plain', Buffer.from(`${name}\n`));
      const res = await f.app.inject({
        method: 'POST',
        url: `${base(m)}/attachments`,
        headers: { ...m.a.headers, ...file.headers },
        payload: file.payload,
      });
      return body<{ attachment: { attachmentId: string } }>(res).attachment.attachmentId;
    };
    const [mine, theirs] = [await up('mine.txt'), await up('other.txt')];
    const msg = await send(m, m.a, { content: 'file', attachmentIds: [mine] });
    await send(m, m.a, { attachmentIds: [theirs] });
    const url = (id: string, who: Who) =>
      f.app.inject({ method: 'GET', url: `${base(m)}/attachments/${id}/url`, headers: who.headers });
    const signed = body<{ url: string }>(await url(mine, m.b)).url;
    expect((await fetch(signed)).status).toBe(200);
    // A correction keeps the files.
    expect(
      body<Message>(await correct(m, m.a, msg.id, 'file!')).attachments.map((a) => a.attachmentId),
    ).toEqual([mine]);
    expect((await retract(m, m.a, msg.id)).statusCode).toBe(200);
    expectError(await url(mine, m.b), 404, 'NOT_FOUND');
    expect((await fetch(signed)).status).toBe(404);
    expect((await url(theirs, m.b)).statusCode).toBe(200);
    const [retractedEvent] = (await f.events()).filter(
      (e) => e.type === 'ConversationMessageRetracted' && e.data.messageId === msg.id,
    );
    expect(retractedEvent!.data.attachmentIds).toEqual([mine]);
  });
});

describe('DELETE …/messages/:messageId, the recall', () => {
  it('is the same retraction, still 204, with its v1 refusals', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'oops' });
    const del = (who: Who) =>
      f.app.inject({ method: 'DELETE', url: `${base(m)}/messages/${sent.id}`, headers: who.headers });
    expectError(await del(m.b), 403, 'FORBIDDEN');
    const ok = await del(m.a);
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBe('');
    expectError(await del(m.a), 404, 'NOT_FOUND');
    expect(await stored(m)).toEqual([
      'ConversationOpened',
      'ConversationMessageSent',
      'ConversationMessageRetracted',
    ]);
    await waitFor(async () => (await relays(m)).length === 2, { what: 'the retraction relayed' });
    expect((await relays(m))[1]!.payload).toMatchObject({
      content: '[retracted] The other side withdrew a message.',
      revision: { messageId: sent.id, action: 'retract', count: 0 },
    });
  });
});

describe('the write state', () => {
  it('is rebuilt from the events with every revision, as it stands', async () => {
    const m = await f.match();
    const sent = await send(m, m.a, { content: 'state' });
    await correct(m, m.a, sent.id, 'state 2');
    const other = await send(m, m.a, { content: 'gone' });
    await retract(m, m.a, other.id);
    const dump = async () =>
      sql(
        f.orm.em.fork(),
        `select (select jsonb_agg(m order by id) from conversations.messages m) as m,
                (select jsonb_agg(r order by id) from conversations.revisions r) as r`,
      );
    const before = await dump();
    await f.orm.em.fork().transactional((em) => rebuildWriteState(em, f.ctx.store));
    expect(await dump()).toEqual(before);
  });
});

const b64 = (n: number, fill: number) => Buffer.alloc(n, fill).toString('base64url');
/** A device key of `who`, published through the key directory (the server never opens with it). */
async function publishKey(who: Who & { accountId: string }): Promise<{ accountId: string; keyId: string }> {
  const keyId = randomUUID();
  const publicKey = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!;
  const res = await f.app.inject({
    method: 'PUT',
    url: `/api/v1/keys/${keyId}`,
    headers: who.headers,
    payload: { publicKey },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { accountId: who.accountId, keyId };
}

function sealed(fill: number, to: { accountId: string; keyId: string }) {
  return {
    alg: 'oan-sealed-v1',
    ephemeralKey: b64(32, fill),
    nonce: b64(12, fill),
    ciphertext: b64(64, fill),
    recipients: [{ ...to, nonce: b64(12, fill), wrappedKey: b64(48, fill) }],
  };
}

describe('a correction of a sealed message', () => {
  it('takes sealed content (shape and keys checked), never plain content, and relays sealed', async () => {
    const m = await f.match();
    const kb = await publishKey(m.b);
    const sent = await send(m, m.a, { sealed: sealed(1, kb) });
    expect(sent.content).toBe('');
    expectError(await correct(m, m.a, sent.id, 'plain'), 400, 'VALIDATION_ERROR');
    const bad = { ...sealed(1, kb), ciphertext: b64(8, 1) };
    const refused: Res = await revise(m, m.a, sent.id, {
      action: 'correct',
      clientMessageId: 'c',
      sealed: bad,
    });
    expectError(refused, 400, 'VALIDATION_ERROR');
    const envelope = sealed(2, kb);
    const res = await revise(m, m.a, sent.id, {
      action: 'correct',
      clientMessageId: 's-1',
      sealed: envelope,
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = body<Message>(res);
    expect(Object.keys(answer)).toEqual([
      'id',
      'senderUserId',
      'content',
      'sealed',
      'attachments',
      'changeSequence',
      'createdAt',
      'revision',
    ]);
    expect(answer).toMatchObject({
      content: '',
      sealed: envelope,
      revision: { state: 'corrected', count: 1 },
    });
    expect((await history(m, m.a))[0]).toEqual(answer);
    await waitFor(async () => (await relays(m)).length === 2, { what: 'the sealed correction relayed' });
    const relay = (await relays(m))[1]!.payload;
    expect(Object.keys(relay)).toEqual(['messageId', 'sealed', 'createdAt', 'revision']);
    expect(relay.sealed).toEqual(envelope);
    const again = await revise(m, m.a, sent.id, {
      action: 'correct',
      clientMessageId: 's-1',
      sealed: envelope,
    });
    expect(again.body).toBe(res.body);
  });
});

describe('the QA clock (CONVERSATIONS_QA_CLOCK=redis)', () => {
  it('moves every command by the offset read from Redis at that moment, and only when it is on', async () => {
    const key = `${f.config.REDIS_PREFIX}qa:clock-offset-ms`;
    const m = await f.match();
    const qa = createConversationContext({
      config: { ...f.config, CONVERSATIONS_QA_CLOCK: 'redis' },
      orm: f.orm,
      redis: f.fleet.redis,
      store: f.ctx.store,
    });
    try {
      await f.fleet.redis.set(key, String(48 * HOUR));
      const moved = await sendMessage(qa, m.conversationId, {
        accountId: m.a.accountId,
        content: 'from the future',
      });
      expect(Date.parse(moved.createdAt) - Date.now()).toBeGreaterThan(47 * HOUR);
      // The service's own context (the knob off) reads no offset.
      const real = await sendMessage(f.ctx, m.conversationId, { accountId: m.a.accountId, content: 'now' });
      expect(Math.abs(Date.parse(real.createdAt) - Date.now())).toBeLessThan(HOUR);
      await f.fleet.redis.del(key);
      const back = await sendMessage(qa, m.conversationId, { accountId: m.a.accountId, content: 'back' });
      expect(Math.abs(Date.parse(back.createdAt) - Date.now())).toBeLessThan(HOUR);
    } finally {
      await f.fleet.redis.del(key);
    }
  });
});
