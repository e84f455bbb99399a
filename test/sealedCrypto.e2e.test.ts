import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import {
  nobleSealer,
  SealedOpenError,
  webcryptoSealer,
  type SealedContent,
  type SealedEnvelope,
} from '@oan/sealed';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import {
  conversationKeys,
  historyItem,
  openRelay,
  publishDevice,
  relayOf,
  sealForConversation,
  sendSealed,
  type Device,
  type StoredMessage,
} from './sealedSupport.ts';
import { matchSaying, matchTwoAccounts, type Match } from './support.ts';

/**
 * Sealed messages with the real library through the edge (docs/sealed-messages.md): a seals with
 * WebCrypto and b opens with noble, and the reverse; what the server hands on is what was sent, byte
 * for byte; the same ciphertext shown as sent by another account, or moved into another conversation,
 * does not open; a retired key still opens what it was sealed for; and a third account c, a v1
 * connector without keys, sees a plain message exactly as before.
 */

/** A second pair's interview for a and c: no word shared with matchTwoAccounts' fintech pair. */
const GARDEN: [string[], string[]] = [
  [
    'We want a garden designer in Porto for a courtyard: native plants, drip irrigation, stone paths.',
    'A family renovating a Porto courtyard garden with native plants and stone paths.',
    'Patience, craft, sustainability.',
    'Call you Garden Finder.',
  ],
  [
    'I want garden design commissions in Porto: courtyards, native plants, drip irrigation, stone paths.',
    'A garden designer in Porto planting native courtyards with drip irrigation and stone paths.',
    'Patience, craft, sustainability.',
    'Call you Spade Finder.',
  ],
];

interface Side {
  c: TestConnector;
  accountId: string;
  device: Device;
}

let fleet: TestFleet;
let m: Match;
let a: Side;
let b: Side;
/** What a sealed in the conversation with b, and what it says. */
let fromA: { message: StoredMessage; sealed: SealedEnvelope; content: SealedContent };

beforeAll(async () => {
  fleet = await TestFleet.start();
  m = await matchTwoAccounts(fleet, ['crypto-a', 'crypto-b']);
  a = { c: m.ca, accountId: m.a.userId, device: await publishDevice(m.ca, m.a.userId, webcryptoSealer) };
  b = { c: m.cb, accountId: m.b.userId, device: await publishDevice(m.cb, m.b.userId, nobleSealer) };
}, 240_000);
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
});

/** Deep-equal and the same JSON text: the envelope as it was sent, key order included. */
function expectSameBytes(got: unknown, sent: SealedEnvelope): void {
  expect(got).toStrictEqual(sent);
  expect(JSON.stringify(got)).toBe(JSON.stringify(sent));
}

/**
 * `from` seals `content` for the conversation's current keys and sends it; the envelope must come
 * back unchanged in the POST answer, the other side's `relay_message` and both histories. Returns
 * what the other side's device opened from its socket.
 */
async function exchange(from: Side, to: Side, content: SealedContent) {
  const sealed = await sealForConversation(from.c, from.device, m.conversationId, content);
  const message = await sendSealed(from.c, m.conversationId, sealed);
  expectSameBytes(message.sealed, sealed);
  const relay = await relayOf(to.c, message.id);
  expectSameBytes(relay.payload.sealed, sealed);
  for (const c of [from.c, to.c])
    expectSameBytes((await historyItem(c, m.conversationId, message.id)).sealed, sealed);
  // The sender's own device reads its history too: it was among the recipients.
  expect(await from.device.open(sealed, m.conversationId, from.accountId)).toEqual(content);
  return { message, sealed, opened: await openRelay(to.device, relay, from.accountId) };
}

const expectNotOpening = (opening: Promise<SealedContent>) =>
  expect(opening).rejects.toSatisfy((e) => e instanceof SealedOpenError && e.code === 'SEALED_CORRUPT');

describe('two matched accounts, a with a WebCrypto device and b with a noble one', () => {
  it('a seals with WebCrypto, b opens with noble, and every copy is byte for byte what a sent', async () => {
    const content = { content: `Meet at the café at 10? 🙂 ${randomUUID()}`, attachmentIds: [randomUUID()] };
    const { message, sealed, opened } = await exchange(a, b, content);
    expect(opened).toEqual(content);
    expect(sealed.recipients.map((r) => [r.accountId, r.keyId])).toEqual([
      [a.accountId, a.device.key.keyId],
      [b.accountId, b.device.key.keyId],
    ]);
    fromA = { message, sealed, content };
  });

  it('b seals with noble, a opens with WebCrypto, and every copy is byte for byte what b sent', async () => {
    const content = { content: `Ten is fine — see you. ${randomUUID()}` };
    expect((await exchange(b, a, content)).opened).toEqual(content);
  });

  it('a’s ciphertext sent again by b, as b’s own, does not open for a', async () => {
    const resent = await sendSealed(b.c, m.conversationId, fromA.sealed);
    const relay = await relayOf(a.c, resent.id);
    expectSameBytes(relay.payload.sealed, fromA.sealed);
    await expectNotOpening(openRelay(a.device, relay, b.accountId));
    // The same bytes open as a's: only the sender the server names differs.
    expect(await openRelay(a.device, relay, a.accountId)).toEqual(fromA.content);
  });
});

describe('a third account c, matched with a through a second Gofer of a', () => {
  let c: TestConnector;
  let cId: string;
  let ac: string;
  beforeAll(async () => {
    const account = await joinAccount(fleet.url, fleet.mailbox, `crypto-c-${fleet.id}@example.com`);
    cId = account.userId;
    c = new TestConnector({ baseUrl: fleet.url, token: account.apiKey });
    await c.connect();
    ac = (await matchSaying(fleet, { a: m.a, ca: m.ca, b: account, cb: c }, GARDEN)).conversationId;
    expect(ac).not.toBe(m.conversationId);
  }, 120_000);
  afterAll(() => c?.close());

  it('sees, as a v1 connector without keys, a plain message exactly as before', async () => {
    expect((await c.rest<{ keys: unknown[] }>('GET', '/keys')).body).toEqual({ keys: [] });
    const sent = await a.c.rest<StoredMessage>('POST', `/conversations/${ac}/messages`, {
      content: 'Hello, c.',
    });
    expect(sent.status, sent.text).toBe(201);
    const relay = await relayOf(c, sent.body.id);
    expect(Object.keys(relay.payload)).toEqual(['messageId', 'content', 'createdAt']);
    expect(relay.payload).toEqual({
      messageId: sent.body.id,
      content: 'Hello, c.',
      createdAt: sent.body.createdAt,
    });
    const item = await historyItem(c, ac, sent.body.id);
    expect(Object.keys(item)).toEqual([
      'id',
      'senderUserId',
      'content',
      'attachments',
      'changeSequence',
      'createdAt',
    ]);
    expect(JSON.stringify(item)).toBe(sent.text);
  });

  it('does not open a’s message moved into a’s conversation with c, which opens where it was sealed', async () => {
    await publishDevice(c, cId, nobleSealer);
    // Only a's own entry can stay: b's keys are no side of this conversation.
    const moved = {
      ...fromA.sealed,
      recipients: fromA.sealed.recipients.filter((r) => r.accountId === a.accountId),
    };
    const sent = await sendSealed(a.c, ac, moved, { allowMissing: true });
    const item = await historyItem(a.c, ac, sent.id);
    expectSameBytes(item.sealed, moved);
    await expectNotOpening(a.device.open(item.sealed, ac, a.accountId));
    expect(await a.device.open(item.sealed, m.conversationId, a.accountId)).toEqual(fromA.content);
  });
});

describe('a key retired', () => {
  const retired = (e: OanEventEnvelope) =>
    e.type === 'system_notice' &&
    e.payload.kind === 'conversation_key_changed' &&
    e.payload.change === 'retired' &&
    e.payload.conversationId === m.conversationId;

  it('tells the other side, and still opens on the device that kept it what it was sealed for', async () => {
    const del = await b.c.rest('DELETE', `/keys/${b.device.key.keyId}`);
    expect(del.status, del.text).toBe(204);
    const notice = await waitFor(() => a.c.pushes.find(retired), {
      what: 'the retired key’s notice on a’s socket',
    });
    expect(JSON.stringify(notice.payload)).toBe(
      JSON.stringify({
        kind: 'conversation_key_changed',
        conversationId: m.conversationId,
        accountId: b.accountId,
        keyId: b.device.key.keyId,
        fingerprint: b.device.key.fingerprint,
        change: 'retired',
      }),
    );
    expect((await conversationKeys(a.c, m.conversationId)).map((k) => k.keyId)).toEqual([a.device.key.keyId]);
    const kept = await historyItem(b.c, m.conversationId, fromA.message.id);
    expect(await b.device.open(kept.sealed, m.conversationId, a.accountId)).toEqual(fromA.content);
  });
});
