import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { nobleSealer, webcryptoSealer, type SealedEnvelope } from '@oan/sealed';
import { TestFleet, waitFor, type FakeChatCompletions, type TestConnector } from '@oan/testing';
import { promptsOf, startFakeBrain } from './fakeBrain.ts';
import { scanKafka, scanPostgres, scanRedis, scanTexts, type Scan } from './fleetScan.ts';
import {
  openRelay,
  publishDevice,
  relayOf,
  sealForConversation,
  sendSealed,
  type Device,
  type StoredMessage,
} from './sealedSupport.ts';
import { matchTwoAccounts, type Match } from './support.ts';
import { WebhookReceiver } from './webhookReceiver.ts';

/**
 * Nowhere in the clear: a sealed message whose text carries a random canary, and its sealed
 * correction carrying another, cross the fleet (every process at debug level, the Gofer brain and
 * session on a recording fake model, a webhook of the receiving side); their reader opens both with
 * the real library. Then the canaries are looked for in every table of the fleet's database, every
 * record of its topics, every Redis key under its prefix, every log line, every webhook body and
 * every prompt the model was given. A plain message with a third canary, sent in the same run, must
 * be found by the same scanners, and so must the sealed message's ciphertext: each scanner sees
 * what is there.
 */

const hex = () => randomBytes(16).toString('hex');
/** Only ever sealed: the message's text, then its correction's. */
const SEALED = hex();
const CORRECTED = hex();
/** The control: sent in the clear. */
const PLAIN = hex();
/** What each owner tells its Gofer after the messages: the brain scan's control. */
const OWNER = hex();

let receiver: WebhookReceiver;
let fake: FakeChatCompletions;
let fleet: TestFleet;
let m: Match;
let aDevice: Device;
let bDevice: Device;
let sealed: SealedEnvelope;
/** A piece of the sealed message's ciphertext: where the sealed message went, it is. */
let ciphertext: string;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  const brain = await startFakeBrain();
  fake = brain.fake;
  fleet = await TestFleet.start({
    env: {
      LOG_LEVEL: 'debug',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_POLL_MS: '200',
      ...brain.env,
    },
  });
  m = await matchTwoAccounts(fleet, ['canary-a', 'canary-b']);
  const hook = await m.cb.rest('POST', '/webhooks', { url: receiver.url('/b') });
  expect(hook.status, hook.text).toBe(201);
}, 240_000);
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
  await fake?.close();
  await receiver?.close();
});

const conversation = () => m.conversationId;
/** What every scan looks for (the ciphertext is known once sealed). */
const NEEDLES = () => [SEALED, CORRECTED, PLAIN, ciphertext];
const isRevisionOf = (e: OanEventEnvelope, messageId: string) =>
  (e.payload.revision as { messageId?: string } | undefined)?.messageId === messageId;

/** Each owner asks its Gofer something, and waits for the answer: the brain runs after the messages. */
async function askGofer(c: TestConnector, goferId: string): Promise<void> {
  const before = c.pushes.length;
  const posted = await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content: `${OWNER} any news?` });
  expect(posted.status, posted.text).toBe(202);
  await waitFor(
    () => c.pushes.slice(before).find((e) => e.type === 'gofer_message' && e.goferId === goferId),
    {
      what: 'the Gofer answering its owner',
    },
  );
}

/** The scan's verdict per needle: whether it was found anywhere. */
const found = (scan: Scan) => ({
  sealedCanary: [...scan.hits.get(SEALED)!, ...scan.hits.get(CORRECTED)!],
  plainCanary: scan.hits.get(PLAIN)!.length > 0,
  ciphertext: scan.hits.get(ciphertext)!.length > 0,
});

describe('a sealed message carrying a canary, beside a plain one carrying another', () => {
  it('reaches b’s socket sealed, and b’s device opens the canary', { timeout: 60_000 }, async () => {
    aDevice = await publishDevice(m.ca, m.a.userId, webcryptoSealer);
    bDevice = await publishDevice(m.cb, m.b.userId, nobleSealer);
    sealed = await sealForConversation(m.ca, aDevice, conversation(), { content: `sealed ${SEALED}` });
    expect(sealed.recipients.map((r) => r.keyId).sort()).toEqual(
      [aDevice.key.keyId, bDevice.key.keyId].sort(),
    );
    // Long enough to occur by chance nowhere else; short of the end, whose base64url bits may differ.
    ciphertext = sealed.ciphertext.slice(0, 40);
    const sent = await sendSealed(m.ca, conversation(), sealed);
    expect(sent.content).toBe('');

    const relay = await relayOf(m.cb, sent.id);
    expect(Object.keys(relay.payload)).toEqual(['messageId', 'sealed', 'createdAt']);
    expect(await openRelay(bDevice, relay, m.a.userId)).toEqual({ content: `sealed ${SEALED}` });

    const correction = await sealForConversation(m.ca, aDevice, conversation(), {
      content: `corrected ${CORRECTED}`,
    });
    const revised = await m.ca.rest<StoredMessage>(
      'POST',
      `/conversations/${conversation()}/messages/${sent.id}/revise`,
      {
        action: 'correct',
        clientMessageId: randomUUID(),
        sealed: correction,
      },
    );
    expect(revised.status, revised.text).toBe(200);
    const told = await waitFor(
      () => m.cb.pushes.find((e) => e.type === 'relay_message' && isRevisionOf(e, sent.id)),
      { what: 'the sealed correction on b’s socket' },
    );
    expect(told.payload.content).toBeUndefined();
    expect(await openRelay(bDevice, told, m.a.userId)).toEqual({ content: `corrected ${CORRECTED}` });

    const plain = await m.ca.rest<StoredMessage>('POST', `/conversations/${conversation()}/messages`, {
      content: `plain ${PLAIN}`,
    });
    expect(plain.status, plain.text).toBe(201);
    expect((await relayOf(m.cb, plain.body.id)).payload.content).toBe(`plain ${PLAIN}`);

    const promptsBefore = fake.recorded.length;
    await askGofer(m.ca, m.ga);
    await askGofer(m.cb, m.gb);
    expect(fake.recorded.length).toBeGreaterThan(promptsBefore);
    // Both messages reached b's webhook, so every stage they pass through has run.
    await waitFor(
      () =>
        [sent.id, String(told.payload.messageId), plain.body.id].every((id) =>
          receiver.at('/b').some((r) => r.answered === 200 && r.body.includes(id)),
        ),
      { timeoutMs: 30_000, what: 'the messages and the correction delivered to b’s webhook' },
    );
  });

  it('is in no table of the fleet’s database, where the plain canary and the ciphertext are', async () => {
    const scan = await scanPostgres(fleet.env.DATABASE_URL!, NEEDLES());
    expect(scan.scanned).toBeGreaterThan(20);
    expect(found(scan)).toEqual({ sealedCanary: [], plainCanary: true, ciphertext: true });
  });

  it('is in no record of the fleet’s topics, where the plain canary and the ciphertext are', async () => {
    const scan = await scanKafka(fleet.env, NEEDLES());
    expect(scan.scanned).toBeGreaterThan(20);
    expect(found(scan)).toEqual({ sealedCanary: [], plainCanary: true, ciphertext: true });
  });

  it('is under no Redis key of the fleet, where the plain canary and the ciphertext are', async () => {
    const scan = await scanRedis(fleet.env, NEEDLES());
    expect(scan.scanned).toBeGreaterThan(0);
    expect(found(scan)).toEqual({ sealedCanary: [], plainCanary: true, ciphertext: true });
  });

  it('is in no webhook body b received, where the plain canary and the ciphertext are', () => {
    const scan = scanTexts(
      receiver.at('/b').map((r) => r.body),
      NEEDLES(),
    );
    expect(found(scan)).toEqual({ sealedCanary: [], plainCanary: true, ciphertext: true });
  });

  it('is in no log line of any process, written at debug level', () => {
    expect(fleet.lines.some((l) => l.includes('"level":20'))).toBe(true);
    expect(fleet.lines.some((l) => l.includes(conversation()))).toBe(true);
    expect(found(scanTexts(fleet.lines, NEEDLES())).sealedCanary).toEqual([]);
  });

  it('never reached the Gofer brain, which was asked after it and saw the owners’ words', () => {
    const scan = scanTexts(promptsOf(fake), [...NEEDLES(), OWNER]);
    expect(scan.hits.get(OWNER)!.length).toBeGreaterThanOrEqual(2);
    expect(found(scan).sealedCanary).toEqual([]);
    // The direct channel never feeds the brain, sealed or not.
    expect(scan.hits.get(PLAIN)).toEqual([]);
  });
});
