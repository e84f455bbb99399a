import { randomUUID } from 'node:crypto';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, nobleSealer, toBase64url, type SealedEnvelope } from '@oan/sealed';
import type { OanEventEnvelope } from '@oan/protocol';
import { TestFleet, waitFor, type JoinedAccount, type TestConnector } from '@oan/testing';
import { scanPostgres } from '../fleetScan.ts';
import { matchTwoAccounts, type Match } from '../support.ts';
import { axeFindings, openTab, startBrowser, WEB_FLEET, type Tab } from './browser.ts';

interface Key {
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
}
interface HistoryItem {
  id: string;
  senderUserId: string;
  content: string;
  sealed?: SealedEnvelope;
  revision?: { state: string; count: number; at: string };
}

/**
 * Signs the tab in as an account matchTwoAccounts joined: its email code is spent and another waits
 * out a 60 s cooldown, so the tab gets the session the sign-in form stores (ADR 0020), the JWT the
 * same verify answered.
 */
async function signInAs(tab: Tab, account: JoinedAccount): Promise<void> {
  const { page } = tab;
  await page.goto('/');
  const session = JSON.stringify({ token: account.jwt, userId: account.userId, email: account.email });
  await page.evaluate(`sessionStorage.setItem('oan.session', ${JSON.stringify(session)})`);
  await page.reload();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The database tables (any schema of the fleet's own) whose rows hold `needle`, as text or as bytes. */
async function tablesHolding(databaseUrl: string, needle: string): Promise<string[]> {
  const scan = await scanPostgres(databaseUrl, [needle]);
  expect(scan.scanned).toBeGreaterThan(0);
  return scan.hits.get(needle)!;
}

const fingerprintsIn = (page: Page, list: 'Your keys' | 'Their keys') =>
  page.getByRole('list', { name: list }).locator('code').allTextContents();
const messages = (page: Page) => page.getByRole('list', { name: 'Messages' });
const messageWith = (page: Page, text: string): Locator =>
  messages(page).getByRole('listitem').filter({ hasText: text });
/** The first envelope the connector got that `pick` matches. */
const delivered = (c: TestConnector, what: string, pick: (e: OanEventEnvelope) => boolean) =>
  waitFor(() => c.delivered.find(pick), { timeoutMs: 30_000, what });

const LOCKED = /Sealed: only your devices and .+'s can open your messages\./;

async function send(page: Page, text: string) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await expect.poll(() => page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
}

/**
 * Sealed direct messages in the page (docs/sealed-messages.md): two matched operators, each in a
 * browser of their own, publish a key on first opening the conversation, compare fingerprints, and
 * talk sealed; the server and its database only ever hold ciphertext. Each side's connector stands
 * by with @oan/sealed's other implementation (noble) to check what the browsers sealed.
 */
describe('the conversation page, when both sides seal their messages', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let m: Match;
  let a: Tab;
  let b: Tab;
  let path: string;
  const said = {
    a1: `Sealed hello from the team ${randomUUID()}`,
    b1: `Sealed answer from the engineer ${randomUUID()}`,
    a2: `A retried line ${randomUUID()}`,
    a1fixed: `Sealed hello, corrected ${randomUUID()}`,
    a3: `Sealed to the new key too ${randomUUID()}`,
    plain: `Unsealed while they have no key ${randomUUID()}`,
  };

  const history = async (c: TestConnector) => {
    const res = await c.rest<HistoryItem[]>('GET', `/conversations/${m.conversationId}/messages?limit=200`);
    expect(res.status).toBe(200);
    return res;
  };
  const keysOf = async (c: TestConnector) => (await c.rest<{ keys: Key[] }>('GET', '/keys')).body.keys;

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({ only: WEB_FLEET, webAtPublicUrl: true }),
      startBrowser(),
    ]);
    m = await matchTwoAccounts(fleet, ['sealteam', 'sealeng']);
    path = `/conversations/${m.conversationId}`;
    a = await openTab(browser, fleet.url);
    b = await openTab(browser, fleet.url);
    await signInAs(a, m.a);
    await signInAs(b, m.b);
  });
  afterAll(async () => {
    m?.ca.close();
    m?.cb.close();
    await browser?.close();
    await fleet?.stop();
  });

  it('makes a non-extractable key in each browser, publishes it, and shows matching fingerprints', async () => {
    await a.page.goto(path);
    await b.page.goto(path);
    for (const { page } of [a, b]) await page.getByText(LOCKED).waitFor({ timeout: 30_000 });
    const [ka, kb] = [await keysOf(m.ca), await keysOf(m.cb)];
    expect(ka).toHaveLength(1);
    expect(kb).toHaveLength(1);
    // The private half stays a CryptoKey nobody can export, in IndexedDB under the published keyId.
    const stored = await a.page.evaluate(
      `new Promise((resolve, reject) => {
        const open = indexedDB.open('oan.sealed');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('keys').objectStore('keys').getAll();
          get.onsuccess = () => resolve(get.result.map((k) => ({ keyId: k.keyId, publicKey: k.publicKey,
            type: k.privateKey.type, alg: k.privateKey.algorithm.name, extractable: k.privateKey.extractable })));
        };
      })`,
    );
    expect(stored).toEqual([
      {
        keyId: ka[0]!.keyId,
        publicKey: ka[0]!.publicKey,
        type: 'private',
        alg: 'X25519',
        extractable: false,
      },
    ]);
    // What each shows for the other is what the other shows for itself, and what noble computes.
    const fa = await nobleSealer.fingerprint(fromBase64url(ka[0]!.publicKey));
    const fb = await nobleSealer.fingerprint(fromBase64url(kb[0]!.publicKey));
    expect(fa).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){9}$/);
    expect(await fingerprintsIn(a.page, 'Your keys')).toEqual([fa]);
    expect(await fingerprintsIn(b.page, 'Their keys')).toEqual([fa]);
    expect(await fingerprintsIn(b.page, 'Your keys')).toEqual([fb]);
    expect(await fingerprintsIn(a.page, 'Their keys')).toEqual([fb]);
    expect([ka[0]!.fingerprint, kb[0]!.fingerprint]).toEqual([fa, fb]);
    for (const { page } of [a, b]) expect(await axeFindings(page)).toEqual([]);
    // A reload keeps the key: nothing new is published.
    await a.page.reload();
    await a.page.getByText(LOCKED).waitFor();
    expect(await keysOf(m.ca)).toEqual(ka);
  });

  it('exchanges sealed messages both ways; the API and the database hold only ciphertext', async () => {
    await send(a.page, said.a1);
    await messageWith(b.page, said.a1).waitFor({ timeout: 30_000 });
    await send(b.page, said.b1);
    await messageWith(a.page, said.b1).waitFor({ timeout: 30_000 });
    const res = await history(m.ca);
    for (const text of [said.a1, said.b1]) expect(res.text).not.toContain(text);
    expect(res.body).toHaveLength(2);
    const [ka, kb] = [await keysOf(m.ca), await keysOf(m.cb)];
    for (const item of res.body) {
      expect(item.content).toBe('');
      expect(item.sealed?.alg).toBe('oan-sealed-v1');
      expect(item.sealed?.recipients.map((r) => [r.accountId, r.keyId]).sort()).toEqual(
        [
          [m.a.userId, ka[0]!.keyId],
          [m.b.userId, kb[0]!.keyId],
        ].sort(),
      );
    }
    for (const text of [said.a1, said.b1])
      expect(await tablesHolding(fleet.env.DATABASE_URL!, text)).toEqual([]);
    // The other side's relay_message carries the envelope, no content.
    const relayed = await delivered(
      m.cb,
      'the sealed relay_message',
      (e) => e.type === 'relay_message' && e.payload.messageId === res.body[0]!.id,
    );
    expect(relayed.payload.sealed).toEqual(res.body[0]!.sealed);
    expect(relayed.payload).not.toHaveProperty('content');
  });

  it('retries a send whose answer was lost with the same clientMessageId and sealed bytes', async () => {
    const posted: string[] = [];
    await a.page.route(`**/api/v1${path}/messages`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      posted.push(route.request().postData() ?? '');
      // The first reaches the server, which stores it; its answer never reaches the page.
      if (posted.length === 1) {
        await route.fetch();
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    await a.page.getByLabel('Message', { exact: true }).fill(said.a2);
    await a.page.getByRole('button', { name: 'Send' }).click();
    await a.page.getByRole('alert').waitFor();
    expect(await a.page.getByLabel('Message', { exact: true }).inputValue()).toBe(said.a2);
    await a.page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => a.page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    await a.page.unroute(`**/api/v1${path}/messages`);
    expect(posted).toHaveLength(2);
    expect(posted[1]).toBe(posted[0]);
    const body = JSON.parse(posted[0]!) as { clientMessageId?: string; sealed?: unknown; content?: unknown };
    expect(body.clientMessageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.sealed).toBeDefined();
    expect(body.content).toBeUndefined();
    expect((await history(m.ca)).body).toHaveLength(3);
    await messageWith(b.page, said.a2).waitFor({ timeout: 30_000 });
    expect(await messageWith(b.page, said.a2).count()).toBe(1);
  });

  it('corrects a sealed message, sealed, and retracts one; both pages show it live', async () => {
    const item = messageWith(a.page, said.a1);
    await item.getByRole('button', { name: /^Correct your message/ }).click();
    await item.getByLabel('Correction').fill(said.a1fixed);
    await item.getByRole('button', { name: 'Save correction' }).click();
    for (const { page } of [a, b]) {
      const fixed = messageWith(page, said.a1fixed);
      await fixed.waitFor({ timeout: 30_000 });
      expect(await fixed.textContent()).toContain('edited');
      await messageWith(page, said.a1).filter({ hasNotText: said.a1fixed }).waitFor({ state: 'detached' });
    }
    const res = await history(m.cb);
    expect(res.text).not.toContain(said.a1fixed);
    const corrected = res.body.find((i) => i.revision)!;
    expect(corrected.revision).toMatchObject({ state: 'corrected', count: 1 });
    expect(corrected.sealed?.alg).toBe('oan-sealed-v1');
    expect(await tablesHolding(fleet.env.DATABASE_URL!, said.a1fixed)).toEqual([]);

    const retracted = messageWith(a.page, said.a2);
    await retracted.getByRole('button', { name: /^Retract your message/ }).click();
    await retracted.getByRole('button', { name: 'Retract it for both of you' }).click();
    for (const { page } of [a, b])
      await messageWith(page, said.a2).waitFor({ state: 'detached', timeout: 30_000 });
    expect((await history(m.cb)).body).toHaveLength(2);
    // The other side's connector learned it as a relay_message naming the message it revises.
    await delivered(
      m.cb,
      'the retraction relay_message',
      (e) =>
        e.type === 'relay_message' &&
        (e.payload.revision as { action?: string } | undefined)?.action === 'retract',
    );
  });

  it("warns when the other side's keys change and seals to every current key from then on", async () => {
    // The engineer adds a device (their connector, with noble): the team's page warns, naming it.
    const device = await nobleSealer.generateDeviceKey();
    const keyId = randomUUID();
    const put = await m.cb.rest('PUT', `/keys/${keyId}`, { publicKey: toBase64url(device.publicKey) });
    expect(put.status).toBe(201);
    const warning = a.page.getByRole('alert').filter({ hasText: /keys changed/ });
    await warning.waitFor({ timeout: 30_000 });
    const fingerprint = await nobleSealer.fingerprint(device.publicKey);
    expect(await warning.textContent()).toContain(`New: ${fingerprint}`);
    expect(await fingerprintsIn(a.page, 'Their keys')).toContain(fingerprint);
    expect(await axeFindings(a.page)).toEqual([]);
    await a.page.getByRole('button', { name: 'I have compared them' }).click();
    await warning.waitFor({ state: 'detached' });
    // The next message opens with the new device's key too, in noble.
    await send(a.page, said.a3);
    await messageWith(b.page, said.a3).waitFor({ timeout: 30_000 });
    const last = (await history(m.cb)).body.at(-1)!;
    expect(last.sealed!.recipients).toHaveLength(3);
    const opened = await nobleSealer.open(last.sealed, {
      conversationId: m.conversationId,
      senderAccountId: m.a.userId,
      myAccountId: m.b.userId,
      keyId,
      privateKey: device.privateKey,
    });
    expect(opened.content).toBe(said.a3);
  });

  it('shows "could not open" for a message not sealed to this browser or that does not open', async () => {
    const [ka] = await keysOf(m.ca);
    const kb = await keysOf(m.cb);
    const seal = (text: string) =>
      nobleSealer.seal(
        { content: text },
        {
          conversationId: m.conversationId,
          senderAccountId: m.b.userId,
          recipients: kb.map((k) => ({
            accountId: m.b.userId,
            keyId: k.keyId,
            publicKey: fromBase64url(k.publicKey),
          })),
        },
      );
    // Sealed to the engineer's own keys only (allowMissing): the team's browser holds no key for it.
    const skipped = await m.cb.rest('POST', `/conversations/${m.conversationId}/messages`, {
      sealed: await seal('not for the team'),
      allowMissing: true,
    });
    expect(skipped.status).toBe(201);
    // Sealed "to" the team's key with a wrapped key that is noise: it names the key but does not open.
    const envelope = await seal('noise for the team');
    envelope.recipients.push({
      accountId: m.a.userId,
      keyId: ka!.keyId,
      nonce: toBase64url(new Uint8Array(12).fill(7)),
      wrappedKey: toBase64url(new Uint8Array(48).fill(9)),
    });
    const noisy = await m.cb.rest('POST', `/conversations/${m.conversationId}/messages`, {
      sealed: envelope,
    });
    expect(noisy.status).toBe(201);
    await messages(a.page)
      .getByText('Could not open this sealed message: it was not sealed to a key of this browser.')
      .waitFor({ timeout: 30_000 });
    await messages(a.page)
      .getByText('Could not open this sealed message: it did not open with the key of this browser.')
      .waitFor();
    expect(await messages(a.page).textContent()).not.toContain('for the team');
  });

  it('sends plain, saying so, while the other side has no key, and seals again once it has', async () => {
    // The engineer retires every key: the team's page says its messages now go unsealed.
    const retired = await keysOf(m.cb);
    for (const k of retired) {
      expect((await m.cb.rest('DELETE', `/keys/${k.keyId}`)).status).toBe(204);
    }
    const unsealed = /has no key yet, so your messages go unsealed: the server can read them\./;
    await a.page.getByText(unsealed).waitFor({ timeout: 30_000 });
    expect(await a.page.getByText(LOCKED).count()).toBe(0);
    await send(a.page, said.plain);
    await a.page
      .getByRole('status')
      .filter({ hasText: /^Sent unsealed: / })
      .waitFor();
    const plain = (await history(m.cb)).body.at(-1)!;
    expect(plain).toMatchObject({ content: said.plain });
    expect(plain).not.toHaveProperty('sealed');
    expect(await axeFindings(a.page)).toEqual([]);
    // The engineer's page, opened again, makes a new key (the old one was retired) and still opens
    // what was sealed to the old one.
    await b.page.reload();
    await b.page.getByText(LOCKED).waitFor({ timeout: 30_000 });
    await messageWith(b.page, said.a1fixed).waitFor();
    await messageWith(b.page, said.plain).waitFor();
    const renewed = await keysOf(m.cb);
    expect(renewed).toHaveLength(1);
    expect(retired.map((k) => k.keyId)).not.toContain(renewed[0]!.keyId);
    await a.page.getByText(LOCKED).waitFor({ timeout: 30_000 });
    for (const tab of [a, b]) expect(tab.pageErrors).toEqual([]);
  });
});
