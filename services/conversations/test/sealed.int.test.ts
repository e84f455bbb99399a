import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body, expectError, form, png, waitFor } from '@oan/testing';
import { rebuildWriteState } from '../src/infra/store.ts';
import { startConversationFleet, type Caller, type ConversationFleet, type Match } from './helpers.ts';

interface Message {
  id: string;
  senderUserId: string;
  content: string;
  attachments: unknown[];
  changeSequence: string;
  createdAt: string;
  sealed?: Sealed;
}
interface Recipient {
  accountId: string;
  keyId: string;
  nonce: string;
  wrappedKey: string;
}
interface Sealed {
  alg: string;
  ephemeralKey: string;
  nonce: string;
  ciphertext: string;
  recipients: Recipient[];
}

let f: ConversationFleet;
beforeAll(async () => {
  f = await startConversationFleet();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

const b64 = (n: number) => randomBytes(n).toString('base64url');
const newKey = () => generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!;
const path = (m: Pick<Match, 'conversationId'>) => `/api/v1/conversations/${m.conversationId}/messages`;
const send = (m: Pick<Match, 'conversationId'>, who: Caller, payload: unknown) =>
  f.app.inject({ method: 'POST', url: path(m), headers: who.headers, payload: payload as object });
const history = async (m: Pick<Match, 'conversationId'>, who: Caller) =>
  body<Message[]>(await f.app.inject({ method: 'GET', url: path(m), headers: who.headers }));
const publish = async (who: Caller) => {
  const keyId = randomUUID();
  const res = await f.app.inject({
    method: 'PUT',
    url: `/api/v1/keys/${keyId}`,
    headers: who.headers,
    payload: { publicKey: newKey() },
  });
  expect(res.statusCode).toBe(201);
  return { accountId: who.accountId, keyId };
};
const retire = async (who: Caller, keyId: string) =>
  expect(
    (await f.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: who.headers })).statusCode,
  ).toBe(204);
/** Random bytes of the right shapes: the server never opens the envelope. */
const sealFor = (...keys: { accountId: string; keyId: string }[]): Sealed => ({
  alg: 'oan-sealed-v1',
  ephemeralKey: b64(32),
  nonce: b64(12),
  ciphertext: b64(200),
  recipients: keys.map((k) => ({ ...k, nonce: b64(12), wrappedKey: b64(48) })),
});
const relays = async (accountId: string) =>
  (await f.envelopes(accountId)).filter((e) => e.type === 'relay_message');
const storedMessages = async (conversationId: string) =>
  (await f.events()).filter(
    (e) => e.type === 'ConversationMessageSent' && e.data.conversationId === conversationId,
  );

describe('a sealed message between two accounts with keys', () => {
  it('is stored and shown as sent: the answer, both histories and the relay_message carry the envelope', async () => {
    const m = await f.match();
    const [ka, kb1, kb2] = [await publish(m.a), await publish(m.b), await publish(m.b)];
    const sealed = sealFor(kb1, kb2, ka);
    const res = await send(m, m.a, { sealed, clientMessageId: 'c-1' });
    expect(res.statusCode, res.body).toBe(201);
    const sent = body<Message>(res);
    expect(Object.keys(sent)).toEqual([
      'id',
      'senderUserId',
      'content',
      'sealed',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
    expect(sent).toMatchObject({
      senderUserId: m.a.accountId,
      content: '',
      attachments: [],
      changeSequence: '1',
    });
    expect(JSON.stringify(sent.sealed)).toBe(JSON.stringify(sealed));
    expect(await history(m, m.a)).toEqual([sent]);
    await waitFor(async () => (await history(m, m.b)).length === 1, { what: 'b sees it' });
    expect(JSON.stringify(await history(m, m.b))).toBe(JSON.stringify([sent]));
    const [relay] = await waitFor(async () => {
      const r = await relays(m.b.accountId);
      return r.length > 0 ? r : undefined;
    });
    expect(JSON.stringify(relay!.payload)).toBe(
      JSON.stringify({ messageId: sent.id, sealed, createdAt: sent.createdAt }),
    );
    // Stored at the event's newest schema version, with the sender's retry key.
    const [event] = await sql<{ version: number; data: Record<string, unknown> }>(
      f.orm.em.fork(),
      `select version, data from conversations.events where type = 'ConversationMessageSent' and stream_id = ?`,
      [`conversation-${m.conversationId}`],
    );
    expect(event).toMatchObject({ version: 2, data: { content: '', sealed, clientMessageId: 'c-1' } });
  });

  it('takes a field order of the sender’s own and answers it in the wire order', async () => {
    const m = await f.match();
    const kb = await publish(m.b);
    const s = sealFor(kb);
    const [r] = s.recipients;
    const shuffled = {
      recipients: [{ wrappedKey: r!.wrappedKey, nonce: r!.nonce, keyId: r!.keyId, accountId: r!.accountId }],
      ciphertext: s.ciphertext,
      nonce: s.nonce,
      ephemeralKey: s.ephemeralKey,
      alg: s.alg,
    };
    const sent = body<Message>(await send(m, m.a, { sealed: shuffled }));
    expect(JSON.stringify(sent.sealed)).toBe(JSON.stringify(s));
  });

  it('binds attachmentIds beside it as for a plain message', async () => {
    const m = await f.match();
    const kb = await publish(m.b);
    const unusable = await send(m, m.a, { sealed: sealFor(kb), attachmentIds: [randomUUID()] });
    expectError(unusable, 400, 'VALIDATION_ERROR');
    expect(await storedMessages(m.conversationId)).toEqual([]);
    const file = form('me.png', 'image/png', png(4, 3));
    const uploaded = await f.app.inject({
      method: 'POST',
      url: `/api/v1/conversations/${m.conversationId}/attachments`,
      headers: { ...m.a.headers, ...file.headers },
      payload: file.payload,
    });
    const { attachment } = body<{ attachment: { attachmentId: string } }>(uploaded);
    const sealed = sealFor(kb);
    const sent = body<Message>(await send(m, m.a, { sealed, attachmentIds: [attachment.attachmentId] }));
    expect(sent).toMatchObject({ content: '', sealed, attachments: [attachment] });
    const [relay] = await waitFor(async () => {
      const r = await relays(m.b.accountId);
      return r.length > 0 ? r : undefined;
    });
    expect(Object.keys(relay!.payload as object)).toEqual([
      'messageId',
      'sealed',
      'createdAt',
      'attachments',
    ]);
  });
});

describe('the server’s checks of a sealed message', () => {
  it('refuses a recipient that is not a current key of one side (400 SEALED_RECIPIENT_UNKNOWN)', async () => {
    const m = await f.match();
    const [ka, kb] = [await publish(m.a), await publish(m.b)];
    const old = await publish(m.b);
    await retire(m.b, old.keyId);
    const stranger = await publish(await f.account());
    for (const sealed of [
      sealFor(kb, { accountId: m.b.accountId, keyId: randomUUID() }),
      sealFor(kb, old),
      sealFor(kb, stranger),
      sealFor(kb, { accountId: m.a.accountId, keyId: kb.keyId }),
      sealFor(kb, kb),
    ]) {
      expectError(await send(m, m.a, { sealed }), 400, 'SEALED_RECIPIENT_UNKNOWN');
    }
    expect(await storedMessages(m.conversationId)).toEqual([]);
    expect((await send(m, m.a, { sealed: sealFor(kb, ka) })).statusCode).toBe(201);
  });

  it('refuses to leave out a current key of the other side unless allowMissing (409 SEALED_RECIPIENTS_MISSING)', async () => {
    const m = await f.match();
    const kb1 = await publish(m.b);
    await publish(m.b);
    const res = await send(m, m.a, { sealed: sealFor(kb1) });
    expectError(res, 409, 'SEALED_RECIPIENTS_MISSING');
    expectError(
      await send(m, m.a, { sealed: sealFor(kb1), allowMissing: false }),
      409,
      'SEALED_RECIPIENTS_MISSING',
    );
    expect(await storedMessages(m.conversationId)).toEqual([]);
    expect((await send(m, m.a, { sealed: sealFor(kb1), allowMissing: true })).statusCode).toBe(201);
  });

  it('refuses a sealed message to an account without keys (409 RECIPIENT_HAS_NO_KEY)', async () => {
    const m = await f.match();
    const ka = await publish(m.a);
    expectError(await send(m, m.a, { sealed: sealFor(ka) }), 409, 'RECIPIENT_HAS_NO_KEY');
    expectError(await send(m, m.a, { sealed: sealFor(ka), allowMissing: true }), 409, 'RECIPIENT_HAS_NO_KEY');
    // Once its last key is retired, again.
    const kb = await publish(m.b);
    await retire(m.b, kb.keyId);
    expectError(await send(m, m.a, { sealed: sealFor(ka) }), 409, 'RECIPIENT_HAS_NO_KEY');
    expect(await storedMessages(m.conversationId)).toEqual([]);
  });

  it('refuses every shape outside the limits with 400 VALIDATION_ERROR, storing nothing', async () => {
    const m = await f.match();
    const kb = await publish(m.b);
    const good = sealFor(kb);
    const r0 = good.recipients[0]!;
    const padded = Buffer.alloc(12, 0xff).toString('base64');
    const bad: unknown[] = [
      { sealed: { ...good, alg: 'oan-sealed-v2' } },
      { sealed: { ...good, ephemeralKey: b64(31) } },
      { sealed: { ...good, ephemeralKey: b64(33) } },
      { sealed: { ...good, nonce: b64(11) } },
      { sealed: { ...good, nonce: `${b64(12)}=` } },
      { sealed: { ...good, nonce: padded } },
      { sealed: { ...good, ciphertext: b64(16) } },
      { sealed: { ...good, ciphertext: b64(40_001) } },
      { sealed: { ...good, ciphertext: `${b64(31).slice(0, 41)}B` } },
      { sealed: { ...good, recipients: [] } },
      { sealed: { ...good, recipients: Array.from({ length: 33 }, () => r0) } },
      { sealed: { ...good, recipients: [{ ...r0, wrappedKey: b64(47) }] } },
      { sealed: { ...good, recipients: [{ ...r0, nonce: b64(13) }] } },
      { sealed: { ...good, recipients: [{ ...r0, keyId: 'not-a-uuid' }] } },
      { sealed: { ...good, recipients: [{ ...r0, extra: 1 }] } },
      { sealed: { ...good, hint: 'x' } },
      { sealed: good, content: 'in the clear too' },
      { sealed: good, content: '' },
      { sealed: good, clientMessageId: '' },
      { sealed: good, clientMessageId: 'x'.repeat(129) },
      { sealed: good, allowMissing: 'yes' },
      { sealed: good, unknown: true },
      { sealed: 'opaque' },
    ];
    const before = (await f.events()).length;
    for (const payload of bad) {
      const res = await send(m, m.a, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 120)).toBe(400);
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    expect((await f.events()).length).toBe(before);
    // A plain v1 body's unknown fields are ignored, as they always were; only a sealed body is strict.
    const plain = await send(m, m.a, { content: 'hi', extra: 1 });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(body<Message>(plain)).not.toHaveProperty('extra');
    // The largest ciphertext and the most recipients are taken.
    const largest = { ...good, ciphertext: b64(40_000) };
    expect((await send(m, m.a, { sealed: largest })).statusCode).toBe(201);
    const most = {
      ...good,
      recipients: [...good.recipients, ...Array.from({ length: 31 }, () => ({ ...r0, keyId: randomUUID() }))],
    };
    expectError(await send(m, m.a, { sealed: most }), 400, 'SEALED_RECIPIENT_UNKNOWN');
  });
});

describe('clientMessageId', () => {
  it('answers the same plain send again with the first message; another body is 409', async () => {
    const m = await f.match();
    const first = await send(m, m.a, { content: 'once', clientMessageId: 'retry-1' });
    expect(first.statusCode).toBe(201);
    const again = await send(m, m.a, { content: 'once', clientMessageId: 'retry-1' });
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expectError(
      await send(m, m.a, { content: 'twice', clientMessageId: 'retry-1' }),
      409,
      'CLIENT_MESSAGE_ID_REUSED',
    );
    // Another sender's, or another conversation's, clientMessageId is its own.
    expect((await send(m, m.b, { content: 'twice', clientMessageId: 'retry-1' })).statusCode).toBe(201);
    const other = await f.match();
    expect((await send(other, other.a, { content: 'twice', clientMessageId: 'retry-1' })).statusCode).toBe(
      201,
    );
    expect((await storedMessages(m.conversationId)).map((e) => e.data.content)).toEqual(['once', 'twice']);
  });

  it('answers the same sealed send again even after the keys changed; another envelope is 409', async () => {
    const m = await f.match();
    const kb = await publish(m.b);
    const sealed = sealFor(kb);
    const first = await send(m, m.a, { sealed, clientMessageId: 's-1' });
    expect(first.statusCode).toBe(201);
    await publish(m.b);
    const again = await send(m, m.a, { sealed, clientMessageId: 's-1' });
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expectError(
      await send(m, m.a, { sealed: sealFor(kb), clientMessageId: 's-1', allowMissing: true }),
      409,
      'CLIENT_MESSAGE_ID_REUSED',
    );
    expectError(
      await send(m, m.a, { content: 'plain', clientMessageId: 's-1' }),
      409,
      'CLIENT_MESSAGE_ID_REUSED',
    );
    expect(await storedMessages(m.conversationId)).toHaveLength(1);
  });

  it('of ten racing identical sends, stores one message and answers it ten times', async () => {
    const m = await f.match();
    const kb = await publish(m.b);
    for (const payload of [
      { content: 'raced', clientMessageId: 'race-plain' },
      { sealed: sealFor(kb), clientMessageId: 'race-sealed' },
    ]) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => send(m, m.a, payload)));
      expect(answers.map((a) => a.statusCode)).toEqual(answers.map(() => 201));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    }
    expect((await storedMessages(m.conversationId)).map((e) => e.data.changeSequence)).toEqual([1, 2]);
    expect((await history(m, m.a)).map((x) => x.changeSequence)).toEqual(['1', '2']);
  });

  it('is kept in a write state that a rebuild from the events reproduces', async () => {
    const m = await f.match();
    await send(m, m.a, { content: 'kept', clientMessageId: 'rebuild-1' });
    const dump = async () =>
      sql(f.orm.em.fork(), `select jsonb_agg(m order by id) as m from conversations.messages m`);
    const before = await dump();
    await f.orm.em.fork().transactional((em) => rebuildWriteState(em, f.ctx.store));
    expect(await dump()).toEqual(before);
    const again = await send(m, m.a, { content: 'kept', clientMessageId: 'rebuild-1' });
    expect(body<Message>(again).changeSequence).toBe('1');
  });
});

describe('a plain message', () => {
  it('is answered, kept and relayed exactly as before: no sealed key anywhere', async () => {
    const m = await f.match();
    await publish(m.b);
    const sent = body<Message>(await send(m, m.a, { content: 'plain words' }));
    expect(sent).not.toHaveProperty('sealed');
    const [relay] = await waitFor(async () => {
      const r = await relays(m.b.accountId);
      return r.length > 0 ? r : undefined;
    });
    expect(JSON.stringify(relay!.payload)).toBe(
      JSON.stringify({ messageId: sent.id, content: 'plain words', createdAt: sent.createdAt }),
    );
    await waitFor(async () => (await history(m, m.b)).length === 1);
    expect(Object.keys((await history(m, m.b))[0]!)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
  });
});
