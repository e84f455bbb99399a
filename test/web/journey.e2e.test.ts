import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { TestFleet } from '@oan/testing';
import { awaitEnvelope, interviewToReady } from '../support.ts';
import {
  axeFindings,
  joinWithGofer,
  uploadToGofer,
  type Side,
  openTab,
  png,
  screenshot,
  signIn,
  startBrowser,
  WEB_FLEET,
  type Pixel,
  type Tab,
} from './browser.ts';

const CODE = '482915';
const CAMILLE = 'camille.martin@example.com';
const JULIEN = 'julien.roux@example.com';

/** What each owner tells their Gofer in the interview: what they look for, who they are, what matters. */
const INTERVIEWS = {
  camille: [
    "I'm looking for a climbing partner in Lyon for weekend sport climbing and evening bouldering; call you Lyon Crag Scout",
    'I have been climbing for five years and lead up to 6c outdoors. I live in Lyon and have a car for crag days at Mont Roc and Saint-Vincent.',
    "Safety, reliability, checking each other's knots, a good laugh at the crag",
  ],
  julien: [
    "I'm looking for a regular climbing partner in Lyon who leads 6a and up and checks knots; call you Belay Buddy",
    'I moved to Lyon last spring. I climb sport routes at 6b, boulder at the gyms on weekday evenings and I am free most weekends.',
    'Patience, punctuality, safety first',
  ],
};

/** A small landscape for a profile photo: sky, a limestone ridge, trees at its foot. */
const crag: Pixel = (x, y) => {
  const ridge = 70 + 28 * Math.sin(x / 23) + 14 * Math.sin(x / 7.3);
  if (y < ridge) return [120 + y, 170 + y / 2, 230];
  if (y < 165) {
    const shade = ((x * 7 + y * 3) % 23) - 11;
    return [196 + shade, 178 + shade, 150 + shade];
  }
  return [50 + ((x * y) % 17), 110 + (x % 19), 60];
};

/** Anything in a page that would make a picture look like a test fixture rather than a product. */
const FIXTURE_LOOK = /<|>|onerror|pwned|\bscript\b|\bundefined\b|\bnull\b|\.test\b/i;

/**
 * The README's pictures, from a journey as people would live it: Camille, who looks for a climbing
 * partner in Lyon, and Julien, new in town; their Gofers are paired, matched, and the two talk. It
 * runs with the other browser tests (the pages must hold up on realistic content too); only with
 * WEB_SCREENSHOTS=1 (`npm run screenshots`) does it write docs/screenshots. The hostile-content
 * fixtures stay in threads.e2e.test.ts, where the escaping is asserted.
 */
describe('the web frontend, along the journey the README shows', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let a: Tab; // Camille
  let b: Tab; // Julien
  const sides = {} as Record<'a' | 'b', Side>;
  let proposed: OanEventEnvelope;

  /** The page is accessible and reads like a product; then (when asked) its picture is taken. */
  async function picture(page: Page, name: string) {
    const text = await page.locator('body').innerText();
    expect(text).not.toMatch(FIXTURE_LOOK);
    expect(await axeFindings(page)).toEqual([]);
    await screenshot(page, name);
  }

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({
        only: WEB_FLEET,
        webAtPublicUrl: true,
        env: {
          OAN_TEST_LOGIN_CODES: `${CAMILLE}=${CODE},${JULIEN}=${CODE}`,
          // As a deployment has it, so the sign-in page offers Google; nobody signs in with it here.
          GOOGLE_CLIENT_ID: 'oan-web.apps.googleusercontent.com',
          GOOGLE_JWKS_URL: 'https://www.googleapis.com/oauth2/v3/certs',
        },
      }),
      startBrowser(),
    ]);
    sides.a = await joinWithGofer(fleet.url, CAMILLE, CODE);
    sides.b = await joinWithGofer(fleet.url, JULIEN, CODE);
    await uploadToGofer(fleet.url, sides.a, 'photos', {
      name: 'mont-roc.png',
      type: 'image/png',
      bytes: png(320, 200, crag),
    });
    await uploadToGofer(fleet.url, sides.b, 'photos', {
      name: 'saint-vincent.png',
      type: 'image/png',
      bytes: png(320, 200, crag),
    });
    await uploadToGofer(fleet.url, sides.b, 'attachments', {
      name: 'climbing-log-2026.txt',
      type: 'text/plain',
      bytes: Buffer.from(
        'Mont Roc, 14 June: 6b onsight, 6c worked\nSaint-Vincent, 21 June: three 6a+ leads\n',
      ),
    });
    await Promise.all([
      interviewToReady(sides.a.c, sides.a.gofer, INTERVIEWS.camille),
      interviewToReady(sides.b.c, sides.b.gofer, INTERVIEWS.julien),
    ]);
    proposed = await awaitEnvelope(sides.a.c, 'pair_proposed', sides.a.gofer);
    a = await openTab(browser, fleet.url);
    b = await openTab(browser, fleet.url);
  });
  afterAll(async () => {
    sides.a?.c.close();
    sides.b?.c.close();
    await browser?.close();
    await fleet?.stop();
  });

  it('signs Camille in and shows the pairing her Gofer found, then confirms it on the thread page', async () => {
    await a.page.goto('/');
    await a.page.getByRole('button', { name: 'Sign in with Google' }).waitFor();
    await picture(a.page, 'signin');
    await signIn(a, CAMILLE, CODE);
    await a.page.getByRole('link', { name: 'Confirm the pairing with Belay Buddy' }).waitFor();
    await picture(a.page, 'home');
    await a.page.goto(proposed.webUrl!);
    await a.page.getByRole('button', { name: 'Confirm pairing' }).click();
    await a.page.getByRole('heading', { name: 'Confirm this pairing?' }).waitFor({ state: 'detached' });
    const other = await sides.b.c.rest('POST', `/threads/${proposed.threadId}/pair/confirm`, {
      roleId: sides.b.gofer,
      accepted: true,
    });
    expect(other.status).toBe(200);
  });

  it("shows the session's card on Camille's Gofer page and lists her Gofers", async () => {
    await awaitEnvelope(sides.a.c, 'session_summary', sides.a.gofer);
    await a.page.goto(`/gofers/${sides.a.gofer}`);
    const card = a.page.getByRole('region', { name: 'Pairings' }).getByRole('listitem');
    const cover = card.getByRole('img', { name: 'Cover photo of Belay Buddy' });
    await expect
      .poll(() => cover.evaluate((img) => (img as { naturalWidth: number }).naturalWidth))
      .toBe(320);
    await expect.poll(() => card.textContent()).toContain('strong match');
    await picture(a.page, 'gofer');
    await a.page.getByRole('link', { name: 'Gofers', exact: true }).click();
    await a.page.getByRole('table').getByText('Lyon Crag Scout').waitFor();
    await picture(a.page, 'gofers');
  });

  it('matches the two on the thread page: Camille asks, Julien accepts in his own browser', async () => {
    await signIn(b, JULIEN, CODE, `/threads/${proposed.threadId}`);
    await a.page.goto(proposed.webUrl!);
    await a.page.getByRole('list', { name: 'Documents' }).getByText('climbing-log-2026.txt').waitFor();
    await a.page.getByRole('button', { name: 'Request a match' }).click();
    await b.page.getByRole('button', { name: 'Accept match' }).waitFor({ timeout: 30_000 });
    await b.page.getByRole('button', { name: 'Accept match' }).click();
    for (const { page } of [a, b])
      await page
        .getByRole('status')
        .filter({ hasText: /^Matched\./ })
        .waitFor({ timeout: 30_000 });
    const photo = a.page.getByRole('list', { name: 'Photos' }).getByRole('img');
    await expect
      .poll(() => photo.evaluate((img) => (img as { naturalWidth: number }).naturalWidth))
      .toBe(320);
    await picture(a.page, 'thread');
  });

  it('lets them talk: each message arrives live in the other browser', async () => {
    await a.page.getByRole('link', { name: 'Open the conversation' }).click();
    await b.page.getByRole('link', { name: 'Open the conversation' }).click();
    const lines: [Tab, Tab, string][] = [
      [a, b, 'Hi Julien! Our Gofers think we would climb well together. Are you free this Saturday?'],
      [
        b,
        a,
        'Hi Camille, yes! I have been wanting to try Mont Roc. Mostly 6b for me, happy to belay on harder stuff.',
      ],
      [a, b, 'Perfect. I can drive: meet at Gorge de Loup at 8:30? I have a 70 m rope and quickdraws.'],
      [b, a, "Great, I'll bring the guidebook and coffee. See you Saturday!"],
    ];
    for (const [from, to, text] of lines) {
      await from.page.getByLabel('Message', { exact: true }).fill(text);
      await from.page.getByRole('button', { name: 'Send' }).click();
      await to.page
        .getByRole('list', { name: 'Messages' })
        .getByText(text, { exact: true })
        .waitFor({ timeout: 30_000 });
    }
    await picture(a.page, 'conversation');
    await a.page.getByRole('link', { name: 'Conversations', exact: true }).click();
    await a.page.getByRole('link', { name: /^With / }).waitFor();
    await picture(a.page, 'conversations');
  });

  it("shows Camille's connector and a fresh pairing code for another one", async () => {
    await a.page.getByRole('link', { name: 'Connectors' }).click();
    await expect.poll(() => a.page.getByRole('table').getByRole('row').count()).toBe(2);
    await a.page.getByRole('button', { name: 'Create a pairing code' }).click();
    await a.page.getByText(/valid until/).waitFor();
    await picture(a.page, 'connectors');
    for (const tab of [a, b]) expect(tab.pageErrors).toEqual([]);
  });
});
