import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build, type Rolldown } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@oan/testing';
import { fromBase64url, nobleSealer, toBase64url, type SealedEnvelope, type WebCryptoKey } from '@oan/sealed';
import type * as sealed from '@oan/sealed';
import { launchChromium } from './browser.ts';

type Lib = typeof sealed;

/** @oan/sealed as a browser bundle would carry it: one minified IIFE script, `window.OanSealed`. */
async function bundle(): Promise<string> {
  const result = await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      write: false,
      lib: { entry: join(REPO_ROOT, 'libs/sealed/src/index.ts'), name: 'OanSealed', formats: ['iife'] },
    },
  });
  const [output] = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  return output!.output[0].code;
}

const content = { content: 'Sealed in Chromium, opened in Node 🙂' };

describe('@oan/sealed in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let code: string;

  beforeAll(async () => {
    code = await bundle();
    browser = await launchChromium();
    page = await browser.newPage();
    // localhost is a secure context, where WebCrypto is available.
    await page.route('http://localhost/', (route) =>
      route.fulfill({ contentType: 'text/html', body: `<!doctype html><script>${code}</script>` }),
    );
    await page.goto('http://localhost/');
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('bundles with no Node module or Buffer (comments are minified away)', () => {
    expect(code).not.toMatch(/\bnode:|\bBuffer\b|\brequire\(|__vite-browser-external/);
  });

  it('seals with WebCrypto in the page for a Node device, and opens what Node sealed for it', async () => {
    const conversationId = randomUUID();
    const [alice, bob] = [randomUUID(), randomUUID()];
    const bobKey = await nobleSealer.generateDeviceKey();
    const bobDevice = { accountId: bob, keyId: randomUUID(), publicKey: toBase64url(bobKey.publicKey) };
    const aliceKeyId = randomUUID();

    const fromPage = await page.evaluate(
      async ({ conversationId, alice, aliceKeyId, bobDevice, content }) => {
        const {
          webcryptoSealer: s,
          fromBase64url,
          toBase64url,
        } = (globalThis as unknown as { OanSealed: Lib }).OanSealed;
        const device = await s.generateDeviceKey();
        (globalThis as unknown as { aliceKey: WebCryptoKey }).aliceKey = device.privateKey;
        const envelope = await s.seal(content, {
          conversationId,
          senderAccountId: alice,
          recipients: [
            { ...bobDevice, publicKey: fromBase64url(bobDevice.publicKey) },
            { accountId: alice, keyId: aliceKeyId, publicKey: device.publicKey },
          ],
        });
        return {
          envelope,
          alicePublicKey: toBase64url(device.publicKey),
          extractable: device.privateKey.extractable,
        };
      },
      { conversationId, alice, aliceKeyId, bobDevice, content },
    );

    expect(fromPage.extractable).toBe(false);
    const asBob = { conversationId, senderAccountId: alice, myAccountId: bob, keyId: bobDevice.keyId };
    expect(await nobleSealer.open(fromPage.envelope, { ...asBob, privateKey: bobKey.privateKey })).toEqual(
      content,
    );

    const reply = { content: 'Sealed in Node, opened in Chromium', attachmentIds: [randomUUID()] };
    const fromNode = await nobleSealer.seal(reply, {
      conversationId,
      senderAccountId: bob,
      recipients: [
        { accountId: alice, keyId: aliceKeyId, publicKey: fromBase64url(fromPage.alicePublicKey) },
      ],
    });
    const opened = await page.evaluate(
      async ({ envelope, conversationId, bob, alice, aliceKeyId }) => {
        const { webcryptoSealer: s } = (globalThis as unknown as { OanSealed: Lib }).OanSealed;
        const { aliceKey } = globalThis as unknown as { aliceKey: WebCryptoKey };
        const options = { conversationId, senderAccountId: bob, myAccountId: alice, keyId: aliceKeyId };
        return s.open(envelope, { ...options, privateKey: aliceKey });
      },
      { envelope: fromNode, conversationId, bob, alice, aliceKeyId },
    );
    expect(opened).toEqual(reply);
  });

  it('seals the same bytes as noble in Node from the same keys and draws', async () => {
    const draws = [32, 32, 12, 12, 12].map((n) => toBase64url(randomBytes(n)));
    const recipients = [0, 1].map(() => ({
      accountId: randomUUID(),
      keyId: randomUUID(),
      publicKey: toBase64url(randomBytes(32)),
    }));
    const ids = { conversationId: randomUUID(), senderAccountId: randomUUID() };
    const scripted = (list: string[]) => {
      let next = 0;
      return () => fromBase64url(list[next++]!);
    };
    const decoded = recipients.map((r) => ({ ...r, publicKey: fromBase64url(r.publicKey) }));

    const inNode = await nobleSealer.seal(content, { ...ids, recipients: decoded, random: scripted(draws) });
    const inPage = await page.evaluate(
      async ({ content, ids, recipients, draws }): Promise<SealedEnvelope> => {
        const { webcryptoSealer: s, fromBase64url } = (globalThis as unknown as { OanSealed: Lib }).OanSealed;
        let next = 0;
        return s.seal(content, {
          ...ids,
          recipients: recipients.map((r) => ({ ...r, publicKey: fromBase64url(r.publicKey) })),
          random: () => fromBase64url(draws[next++]!),
        });
      },
      { content, ids, recipients, draws },
    );
    expect(JSON.stringify(inPage)).toBe(JSON.stringify(inNode));
  });
});
