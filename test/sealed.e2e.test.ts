import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { nobleSealer, type SealedEnvelope } from '@oan/sealed';
import { TestFleet, waitFor, type TestConnector } from '@oan/testing';
import {
  conversationKeys,
  newPublicKey,
  publishDevice,
  type PublishedKey,
  type StoredMessage,
} from './sealedSupport.ts';
import { matchTwoAccounts, openStateProbe, type Answer, type Match, type StateProbe } from './support.ts';

/**
 * Sealed messages and the key directory through the edge (docs/sealed-messages.md), as two
 * connectors of a real match use them: b starts without keys (a v1 connector), a publishes; the
 * envelopes are random bytes of the right shapes, since the server never opens one.
 */

let fleet: TestFleet;
let m: Match;
let probe: StateProbe;

beforeAll(async () => {
  fleet = await TestFleet.start();
  m = await matchTwoAccounts(fleet, ['seal-a', 'seal-b']);
  probe = await openStateProbe(fleet.env.DATABASE_URL!);
});
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await probe?.close();
  await fleet?.stop();
});

const b64 = (n: number) => randomBytes(n).toString('base64url');
const messages = () => `/conversations/${m.conversationId}/messages`;
const sealFor = (...keys: { accountId: string; keyId: string }[]): SealedEnvelope => ({
  alg: 'oan-sealed-v1',
  ephemeralKey: b64(32),
  nonce: b64(12),
  ciphertext: b64(1000),
  recipients: keys.map((k) => ({
    accountId: k.accountId,
    keyId: k.keyId,
    nonce: b64(12),
    wrappedKey: b64(48),
  })),
});
const history = async (c: TestConnector) => {
  const res = await c.rest<StoredMessage[]>('GET', messages());
  expect(res.status, res.text).toBe(200);
  return res.body;
};
/** What the connector's socket pushed of this conversation's messages. */
const relays = (c: TestConnector) =>
  c.pushes.filter((e) => e.type === 'relay_message' && e.conversationId === m.conversationId);
const keyNotices = (c: TestConnector) =>
  c.pushes.filter(
    (e: OanEventEnvelope) => e.type === 'system_notice' && e.payload.kind === 'conversation_key_changed',
  );
const expectErrorBody = (res: Answer, status: number, code: string) => {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.body as object).sort()).toEqual(['code', 'error']);
  expect((res.body as { code: string }).code).toBe(code);
};

let aKey: { accountId: string; keyId: string };
const bKeys: PublishedKey[] = [];

describe('an account without keys (a v1 connector)', () => {
  it('is never sent a sealed message (409), and sees the plain conversation exactly as before', async () => {
    // a publishes a key (201, or it throws).
    const aDevice = await publishDevice(m.ca, m.a.userId, nobleSealer);
    aKey = { accountId: m.a.userId, keyId: aDevice.key.keyId };
    // The key notice to B is appended by a reactor: counted before, so the refusal alone is measured.
    await waitFor(() => keyNotices(m.cb).length === 1, { what: "B told of A's new key" });
    const before = await probe.stores();
    const refused = await m.ca.rest('POST', messages(), { sealed: sealFor(aKey) });
    expectErrorBody(refused, 409, 'RECIPIENT_HAS_NO_KEY');
    expect(await probe.stores()).toEqual(before);

    const sent = await m.ca.rest<StoredMessage>('POST', messages(), { content: 'plain, as always' });
    expect(sent.status, sent.text).toBe(201);
    expect(Object.keys(sent.body)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
    const [relay] = await waitFor(() => (relays(m.cb).length > 0 ? relays(m.cb) : undefined), {
      what: 'the plain relay_message on b’s socket',
    });
    expect(Object.keys(relay!.payload)).toEqual(['messageId', 'content', 'createdAt']);
    expect(relay!.payload).toEqual({
      messageId: sent.body.id,
      content: 'plain, as always',
      createdAt: sent.body.createdAt,
    });
    const seen = await waitFor(async () => {
      const h = await history(m.cb);
      return h.length > 0 ? h : undefined;
    });
    expect(JSON.stringify(seen)).toBe(JSON.stringify([sent.body]));
  });
});

describe('the key directory through the edge', () => {
  it('publishes (201), answers a retry (200), refuses another key under the keyId and a ninth key (409)', async () => {
    const keyId = randomUUID();
    const publicKey = await newPublicKey();
    const first = await m.cb.rest<PublishedKey>('PUT', `/keys/${keyId}`, { publicKey });
    expect(first.status, first.text).toBe(201);
    const again = await m.cb.rest<PublishedKey>('PUT', `/keys/${keyId}`, { publicKey });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expectErrorBody(
      await m.cb.rest('PUT', `/keys/${keyId}`, { publicKey: await newPublicKey() }),
      409,
      'KEY_ID_IN_USE',
    );
    bKeys.push(first.body);

    // a hears of it, on its socket.
    const [notice] = await waitFor(() => (keyNotices(m.ca).length > 0 ? keyNotices(m.ca) : undefined), {
      what: 'the key notice on a’s socket',
    });
    expect(notice).toMatchObject({ type: 'system_notice', source: 'platform' });
    expect(JSON.stringify(notice!.payload)).toBe(
      JSON.stringify({
        kind: 'conversation_key_changed',
        conversationId: m.conversationId,
        accountId: m.b.userId,
        keyId,
        fingerprint: first.body.fingerprint,
        change: 'published',
      }),
    );

    const more: PublishedKey[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await m.cb.rest<PublishedKey>('PUT', `/keys/${randomUUID()}`, {
        publicKey: await newPublicKey(),
      });
      expect(res.status, res.text).toBe(201);
      more.push(res.body);
    }
    expectErrorBody(
      await m.cb.rest('PUT', `/keys/${randomUUID()}`, { publicKey: await newPublicKey() }),
      409,
      'TOO_MANY_KEYS',
    );
    for (const k of more.slice(1)) expect((await m.cb.rest('DELETE', `/keys/${k.keyId}`)).status).toBe(204);
    expect((await m.cb.rest('DELETE', `/keys/${more[1]!.keyId}`)).status).toBe(204);
    expectErrorBody(await m.ca.rest('DELETE', `/keys/${keyId}`), 404, 'KEY_NOT_FOUND');
    bKeys.push(more[0]!);

    const mine = await m.cb.rest<{ keys: PublishedKey[] }>('GET', '/keys');
    expect(mine.body).toEqual({ keys: bKeys });
    // Both sides' keys (200, or it throws), a's first.
    const both = await conversationKeys(m.ca, m.conversationId);
    expect(both.map((k) => [k.accountId, k.keyId])).toEqual([
      [m.a.userId, aKey.keyId],
      ...bKeys.map((k) => [m.b.userId, k.keyId]),
    ]);
    await waitFor(() => keyNotices(m.ca).length === 1 + 7 + 6, { what: 'every key notice on a’s socket' });
  });
});

describe('a sealed message', () => {
  it('reaches the other side’s socket and both histories byte for byte, content ""', async () => {
    const sealed = sealFor(...bKeys.map((k) => ({ accountId: m.b.userId, keyId: k.keyId })), aKey);
    const sent = await m.ca.rest<StoredMessage>('POST', messages(), {
      sealed,
      clientMessageId: 'first-sealed',
    });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.content).toBe('');
    expect(JSON.stringify(sent.body.sealed)).toBe(JSON.stringify(sealed));
    // A retry of the same send answers the same message; another body under its id is refused.
    const retry = await m.ca.rest<StoredMessage>('POST', messages(), {
      sealed,
      clientMessageId: 'first-sealed',
    });
    expect(retry.status).toBe(201);
    expect(retry.text).toBe(sent.text);
    expectErrorBody(
      await m.ca.rest('POST', messages(), {
        sealed: { ...sealed, ciphertext: b64(1000) },
        clientMessageId: 'first-sealed',
      }),
      409,
      'CLIENT_MESSAGE_ID_REUSED',
    );

    const pushed = await waitFor(() => relays(m.cb).find((e) => e.payload.messageId === sent.body.id), {
      what: 'the sealed relay_message on b’s socket',
    });
    expect(Object.keys(pushed.payload)).toEqual(['messageId', 'sealed', 'createdAt']);
    expect(JSON.stringify(pushed.payload.sealed)).toBe(JSON.stringify(sealed));
    expect(relays(m.cb).filter((e) => e.payload.messageId === sent.body.id)).toHaveLength(1);

    const mine = (await history(m.ca)).at(-1);
    expect(JSON.stringify(mine)).toBe(sent.text);
    const theirs = await waitFor(async () => (await history(m.cb)).find((x) => x.id === sent.body.id));
    expect(JSON.stringify(theirs)).toBe(sent.text);
  });

  it('outside the limits is refused with {error, code}, and nothing is stored or told', async () => {
    const good = sealFor(...bKeys.map((k) => ({ accountId: m.b.userId, keyId: k.keyId })));
    const r0 = good.recipients[0]!;
    const cases: [unknown, number, string][] = [
      [{ sealed: { ...good, ephemeralKey: b64(31) } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, nonce: b64(16) } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, ciphertext: b64(16) } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, ciphertext: b64(40_001) } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, recipients: [] } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, recipients: Array.from({ length: 33 }, () => r0) } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, recipients: [{ ...r0, wrappedKey: b64(32) }] } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, alg: 'none' } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: { ...good, extra: true } }, 400, 'VALIDATION_ERROR'],
      [{ sealed: good, content: 'both' }, 400, 'VALIDATION_ERROR'],
      [{ sealed: good, clientMessageId: 'x'.repeat(129) }, 400, 'VALIDATION_ERROR'],
      [{ sealed: good, unknownField: 1 }, 400, 'VALIDATION_ERROR'],
      [{ sealed: sealFor({ accountId: m.b.userId, keyId: randomUUID() }) }, 400, 'SEALED_RECIPIENT_UNKNOWN'],
      [
        { sealed: sealFor({ accountId: m.b.userId, keyId: bKeys[0]!.keyId }) },
        409,
        'SEALED_RECIPIENTS_MISSING',
      ],
    ];
    const historyBefore = JSON.stringify(await history(m.ca));
    const relaysBefore = relays(m.cb).length;
    const before = await probe.stores();
    for (const [payload, status, code] of cases) {
      expectErrorBody(await m.ca.rest('POST', messages(), payload), status, code);
    }
    expect(await probe.stores()).toEqual(before);
    expect(JSON.stringify(await history(m.ca))).toBe(historyBefore);
    // A plain message after them is the next one, and the only one b's socket gets.
    const next = await m.ca.rest<StoredMessage>('POST', messages(), { content: 'after the refusals' });
    expect(next.status).toBe(201);
    await waitFor(() => relays(m.cb).some((e) => e.payload.messageId === next.body.id));
    expect(relays(m.cb).length).toBe(relaysBefore + 1);
    expect(JSON.stringify((await history(m.ca)).slice(0, -1))).toBe(historyBefore);
  });
});
