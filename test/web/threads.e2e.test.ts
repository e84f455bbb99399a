import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { TestFleet } from '@oan/testing';
import { awaitEnvelope, interviewToReady } from '../support.ts';
import {
  axeFindings,
  joinWithGofer,
  openTab,
  png,
  signIn,
  startBrowser,
  tokenOf,
  uploadToGofer,
  WEB_FLEET,
  type Side,
  type Tab,
} from './browser.ts';

const CODE = '135790';
const TEAM = 'team@web.test';
const ENG = 'eng@web.test';
/** Markup and script in every text a counterpart controls: shown as text, never run. */
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>`;
/** Short enough to stay whole in the summary card's quoted highlights (the scripted session cuts at 80). */
const HOSTILE_CARD = `<img src=x onerror=window.__pwned=1>`;
/** In a file name: no `/` (the server keeps what follows the last one) and no `"` (FormData escapes it). */
const HOSTILE_FILE = `${HOSTILE_CARD}cv`;

/**
 * The thread and conversation pages with two operators: the team's and the engineer's
 * Gofers (driven by their connectors through the scripted interview) get paired; each operator acts
 * in their own browser, and what one does shows up in the other's page without a reload.
 */
describe('the web frontend, when two operators are paired, matched and talking', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let a: Tab; // the team
  let b: Tab; // the engineer
  const sides = {} as Record<'a' | 'b', Side>;
  let proposed: OanEventEnvelope;

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({
        only: WEB_FLEET,
        webAtPublicUrl: true,
        env: { OAN_TEST_LOGIN_CODES: `${TEAM}=${CODE},${ENG}=${CODE}` },
      }),
      startBrowser(),
    ]);
    sides.a = await joinWithGofer(fleet.url, TEAM, CODE);
    sides.b = await joinWithGofer(fleet.url, ENG, CODE);
    // The engineer's Gofer holds a photo and a document with a hostile name: the team's summary card lists both.
    await uploadToGofer(fleet.url, sides.b, 'photos', {
      name: 'me.png',
      type: 'image/png',
      bytes: png(24, 16),
    });
    await uploadToGofer(fleet.url, sides.b, 'attachments', {
      name: `${HOSTILE_FILE}.txt`,
      type: 'text/plain',
      bytes: Buffer.from('eight years of TypeScript\n'),
    });
    await Promise.all([
      interviewToReady(sides.a.c, sides.a.gofer, [
        'We are hiring a backend engineer: remote, TypeScript, Postgres, Kafka.',
        'We are a fintech team building payment APIs, fully remote, offering equity and mentoring.',
        'Ownership, honesty, remote-first collaboration.',
        'Call you Team Scout.',
      ]),
      interviewToReady(sides.b.c, sides.b.gofer, [
        `${HOSTILE_CARD} I am looking for a remote backend engineering role with TypeScript and Postgres at a fintech team.`,
        'I am a backend engineer with eight years of TypeScript, Postgres and Kafka building payment APIs.',
        `${HOSTILE_CARD} Remote work, ownership, honest feedback.`,
        'Call you Career Scout.',
      ]),
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

  const notPwned = async (page: Page) => {
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img[src="x"], main script').count()).toBe(0);
  };

  it('lists the pairing waiting for confirmation, and confirms it on the thread page of its webUrl', async () => {
    expect(proposed.webUrl).toBe(`${fleet.url}/threads/${proposed.threadId}`);
    await signIn(a, TEAM, CODE);
    const waiting = a.page.getByRole('link', { name: /^Confirm the pairing with / });
    await waiting.waitFor();
    await a.page.goto(proposed.webUrl!);
    await a.page.getByRole('heading', { name: 'Confirm this pairing?' }).waitFor();
    expect(await axeFindings(a.page)).toEqual([]);
    await a.page.getByRole('button', { name: 'Confirm pairing' }).click();
    await a.page.getByRole('heading', { name: 'Confirm this pairing?' }).waitFor({ state: 'detached' });
    const other = await sides.b.c.rest('POST', `/threads/${proposed.threadId}/pair/confirm`, {
      roleId: sides.b.gofer,
      accepted: true,
    });
    expect(other.status).toBe(200);
  });

  it('opens the webUrl of a session_summary signed out, signs in and lands on that thread with its card', async () => {
    const summary = await awaitEnvelope(sides.b.c, 'session_summary', sides.b.gofer);
    expect(summary.webUrl).toBe(`${fleet.url}/threads/${proposed.threadId}`);
    await signIn(b, ENG, CODE, new URL(summary.webUrl!).pathname);
    expect(new URL(b.page.url()).pathname).toBe(`/threads/${proposed.threadId}`);
    await b.page.getByRole('button', { name: 'Request a match' }).waitFor();
    // The team's side: its card shows the engineer's photo and hostile-named document through signed URLs.
    await awaitEnvelope(sides.a.c, 'session_summary', sides.a.gofer);
    await a.page.reload();
    const photo = a.page.getByRole('list', { name: 'Photos' }).getByRole('img');
    await photo.waitFor();
    // Loaded from its signed URL on the object store's origin (img-src of the CSP), not just placed.
    await expect.poll(() => photo.evaluate((img) => (img as { naturalWidth: number }).naturalWidth)).toBe(24);
    const doc = a.page.getByRole('list', { name: 'Documents' }).getByRole('link');
    await expect.poll(() => doc.textContent()).toBe(`${HOSTILE_FILE}.txt`);
    expect(await doc.getAttribute('href')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    // The engineer's answers, quoted in the card, hold markup: shown as text.
    expect(await a.page.locator('.summary').textContent()).toContain(HOSTILE_CARD);
    await notPwned(a.page);
    expect(await axeFindings(a.page)).toEqual([]);
  });

  it("shows the pairing on the team's Gofer page as a card: the engineer's cover photo, name and status", async () => {
    const gofers = await sides.b.c.rest<{ goferId: string; name: string }[]>('GET', '/gofers');
    const counterpart = gofers.body.find((g) => g.goferId === sides.b.gofer)!.name;
    await a.page.goto(`/gofers/${sides.a.gofer}`);
    const card = a.page.getByRole('region', { name: 'Pairings' }).getByRole('listitem');
    await expect.poll(() => card.count()).toBe(1);
    // The cover is the engineer's photo, loaded from a fresh signed URL of the object store.
    const cover = card.getByRole('img', { name: `Cover photo of ${counterpart}` });
    await expect.poll(() => cover.evaluate((img) => (img as { naturalWidth: number }).naturalWidth)).toBe(24);
    const src = (await cover.getAttribute('src'))!;
    expect(src).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(new URL(src).origin).not.toBe(fleet.url);
    expect(await card.textContent()).toContain(`With ${counterpart}`);
    // Its status as the API has it (`session_ended` reads "session ended"), and the summary's preview.
    const listed = await sides.a.c.rest<{
      items: { pairingStatus: string; summaryPreview: string | null }[];
    }>('GET', `/gofers/${sides.a.gofer}/pairings`);
    const { pairingStatus, summaryPreview } = listed.body.items[0]!;
    expect(await card.textContent()).toContain(`· ${pairingStatus.replace(/_/g, ' ')}`);
    expect(summaryPreview).toBeTruthy();
    expect(await card.textContent()).toContain(summaryPreview);
    await notPwned(a.page);
    expect(await axeFindings(a.page)).toEqual([]);
    // The card opens the thread's page.
    await card.getByRole('link').click();
    await a.page.waitForURL(`**/threads/${proposed.threadId}`);
    await a.page.getByRole('button', { name: 'Request a match' }).waitFor();
  });

  it("shows the team's match request in the engineer's page live, and the engineer's decision in the team's", async () => {
    await a.page.getByRole('button', { name: 'Request a match' }).click();
    await a.page.getByText(/^Match requested: waiting for /).waitFor();
    await b.page.getByRole('button', { name: 'Accept match' }).waitFor({ timeout: 30_000 });
    expect(await axeFindings(b.page)).toEqual([]);
    await b.page.getByRole('button', { name: 'Accept match' }).click();
    await a.page
      .getByRole('status')
      .filter({ hasText: /^Matched\./ })
      .waitFor({ timeout: 30_000 });
    await b.page
      .getByRole('status')
      .filter({ hasText: /^Matched\./ })
      .waitFor();
  });

  it('sends a conversation message that arrives live in the other browser, as text', async () => {
    await a.page.getByRole('link', { name: 'Open the conversation' }).click();
    await b.page.getByRole('link', { name: 'Open the conversation' }).click();
    await a.page.getByText('No messages yet. Say hello.').waitFor();
    const message = `Hello from the team ${HOSTILE}`;
    await a.page.getByLabel('Message', { exact: true }).fill(message);
    await a.page.getByRole('button', { name: 'Send' }).click();
    const inB = b.page.getByRole('list', { name: 'Messages' }).getByText(message, { exact: true });
    await inB.waitFor({ timeout: 30_000 });
    // A file with a hostile name, sent by the engineer's connector, listed in the team's page as text.
    const conversationId = new URL(a.page.url()).pathname.split('/').pop()!;
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('notes\n')], { type: 'text/plain' }), `${HOSTILE_FILE}.txt`);
    const up = await fetch(`${fleet.url}/api/v1/conversations/${conversationId}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sides.b.jwt}` },
      body: form,
    });
    const { attachment } = (await up.json()) as { attachment: { attachmentId: string } };
    const sent = await sides.b.c.rest('POST', `/conversations/${conversationId}/messages`, {
      content: 'my notes',
      attachmentIds: [attachment.attachmentId],
    });
    expect(sent.status).toBe(201);
    await a.page.getByRole('button', { name: /^Document: <img src=x/ }).waitFor({ timeout: 30_000 });
    await notPwned(a.page);
    await notPwned(b.page);
    expect(await axeFindings(a.page)).toEqual([]);
    await a.page.getByRole('link', { name: 'Conversations', exact: true }).click();
    await a.page.getByRole('link', { name: /^With / }).waitFor();
    expect(await axeFindings(a.page)).toEqual([]);
  });

  it('lists the connector keys, makes a pairing code with its expiry and revokes a key', async () => {
    const { page } = a;
    await page.getByRole('link', { name: 'Connectors' }).click();
    const rows = page.getByRole('table').getByRole('row');
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByRole('button', { name: 'Create a pairing code' }).click();
    await expect.poll(() => page.getByLabel('Pairing code').inputValue()).toMatch(/^[0-9a-f]{16}$/);
    await page.getByText(/valid until/).waitFor();
    expect(await axeFindings(page)).toEqual([]);
    await page.getByRole('button', { name: /^Revoke / }).click();
    await page.getByRole('button', { name: /now$/ }).click();
    await page.getByText('No connector is paired.').waitFor();
  });

  it('never put either JWT in a URL, the console or a fleet log, and no page script failed', async () => {
    for (const tab of [a, b]) {
      const token = (await tokenOf(tab))!;
      expect(token).toBeTruthy();
      for (const url of tab.urls) expect(url).not.toContain(token);
      for (const line of tab.console) expect(line).not.toContain(token);
      expect(fleet.lines.some((l) => l.includes(token))).toBe(false);
      expect(tab.pageErrors).toEqual([]);
    }
  });
});
