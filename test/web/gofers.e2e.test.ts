import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFleet } from '@oan/testing';
import { axeFindings, openTab, png, signIn, startBrowser, tokenOf, WEB_FLEET, type Tab } from './browser.ts';

const EMAIL = 'operator@web.test';
const CODE = '246810';

/** The web frontend's first slice: sign in with a QA code, a Gofer's life in the page, its reply live. */
describe('the web frontend, when an operator signs in and works with Gofers', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let tab: Tab;

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({
        only: WEB_FLEET,
        webAtPublicUrl: true,
        env: { OAN_TEST_LOGIN_CODES: `${EMAIL}=${CODE}` },
      }),
      startBrowser(),
    ]);
    tab = await openTab(browser, fleet.url);
  });
  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
  });

  it('serves the app at / with a CSP that allows no inline script, and the SPA for any page path', async () => {
    for (const path of ['/', '/gofers/x', '/threads/y', '/conversations', '/connectors']) {
      const res = await fetch(`${fleet.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("connect-src 'self'");
      const html = await res.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    // The API keeps its JSON 404 beside the pages.
    expect((await fetch(`${fleet.url}/api/v1/nothing`)).status).toBe(404);
  });

  it('signs in with the email code and shows an accessible sign-in page first, without Google here', async () => {
    // This fleet has no GOOGLE_CLIENT_ID / GOOGLE_JWKS_URL: the page offers the email code alone.
    expect(await (await fetch(`${fleet.url}/config.json`)).json()).toEqual({ google: null });
    await tab.page.goto('/');
    await tab.page.getByRole('heading', { name: 'Sign in to OAN' }).waitFor();
    expect(await tab.page.getByRole('button', { name: 'Send code' }).isVisible()).toBe(true);
    expect(await tab.page.getByRole('button', { name: 'Sign in with Google' }).count()).toBe(0);
    expect(await axeFindings(tab.page)).toEqual([]);
    await signIn(tab, EMAIL, CODE);
    await tab.page.getByRole('heading', { name: 'Your Gofers' }).waitFor();
    await tab.page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    expect(await axeFindings(tab.page)).toEqual([]);
  });

  it('creates a Gofer, shows its greeting and its reply to a message without a reload', async () => {
    const { page } = tab;
    await page.getByRole('button', { name: 'New Gofer' }).click();
    await page.waitForURL(/\/gofers\/[^/]+$/);
    const chat = page.getByRole('list', { name: 'Role-chat messages' });
    await chat.getByRole('listitem').first().waitFor();
    const before = await chat.getByRole('listitem').count();
    let reloaded = false;
    page.once('load', () => (reloaded = true));
    await page
      .getByLabel(/^Message to /)
      .fill('I am looking for a remote TypeScript role at a fintech team.');
    await page.getByRole('button', { name: 'Send' }).click();
    await chat.getByText('I am looking for a remote TypeScript role at a fintech team.').waitFor();
    // The Gofer's answer arrives as a gofer_message on the socket; the page shows it by itself.
    await expect.poll(() => chat.locator('.msg-assistant').count(), { timeout: 30_000 }).toBeGreaterThan(1);
    expect(await chat.getByRole('listitem').count()).toBeGreaterThan(before + 1);
    expect(reloaded).toBe(false);
    expect(await axeFindings(page)).toEqual([]);
  });

  it('uploads a photo into the role-chat and shows it; a file of another type is refused with the reason', async () => {
    const { page } = tab;
    const chat = page.getByRole('list', { name: 'Role-chat messages' });
    const file = page.getByLabel(/^A document .* or photo/);
    await file.setInputFiles({ name: 'desk.png', mimeType: 'image/png', buffer: png(24, 16) });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('status').filter({ hasText: 'Uploaded desk.png.' }).waitFor();
    // The photo the operator sent, shown from the file itself (the upload's answer carries no URL).
    const preview = page.getByRole('img', { name: 'Your photo desk.png' });
    await expect
      .poll(() => preview.evaluate((img) => (img as { naturalWidth: number }).naturalWidth))
      .toBe(24);
    // It went into the role-chat as a message carrying the photo, as the Gofer's history has it.
    await chat.getByText('Photo: desk.png').waitFor();
    const goferId = new URL(page.url()).pathname.split('/').pop()!;
    const history = await fetch(`${fleet.url}/api/v1/gofers/${goferId}/chat/messages`, {
      headers: { authorization: `Bearer ${await tokenOf(tab)}` },
    });
    const messages = (await history.json()) as { attachments?: { kind: string; name: string }[] }[];
    expect(messages.flatMap((m) => m.attachments ?? [])).toContainEqual(
      expect.objectContaining({ kind: 'photo', name: 'desk.png' }),
    );
    expect(await axeFindings(page)).toEqual([]);

    // An executable is neither a document nor a photo: the server's reason, and nothing sent.
    const before = await chat.getByRole('listitem').count();
    await file.setInputFiles({
      name: 'tool.exe',
      mimeType: 'application/x-msdownload',
      buffer: Buffer.from('MZ'),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /Unsupported file type/ })
      .waitFor();
    expect(await chat.getByText('Document: tool.exe').count()).toBe(0);
    expect(await chat.getByRole('listitem').count()).toBe(before);
  });

  it('keeps the session across a reload, lists the Gofer and deletes it', async () => {
    const { page } = tab;
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('link', { name: 'Gofers' }).click();
    const rows = page.getByRole('table').getByRole('row');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await axeFindings(page)).toEqual([]);
    await page.getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('button', { name: /for good$/ }).click();
    await page.getByText('No Gofers yet.').waitFor();
  });

  it('never puts the JWT in a URL, the console or a fleet log', async () => {
    const token = await tokenOf(tab);
    expect(token).toBeTruthy();
    expect(tab.urls.length).toBeGreaterThan(0);
    for (const url of tab.urls) expect(url).not.toContain(token);
    for (const line of tab.console) expect(line).not.toContain(token);
    expect(fleet.lines.some((l) => l.includes(token!))).toBe(false);
    expect(tab.pageErrors).toEqual([]);
  });

  it('signs out: the session is gone from the tab, and neither a reload nor Back brings it back', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Connectors' }).click();
    await page.getByRole('heading', { name: 'Connectors' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to OAN' }).waitFor();
    expect(await tokenOf(tab)).toBeUndefined();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to OAN' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    await page.goBack();
    await page.getByRole('heading', { name: 'Sign in to OAN' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await tokenOf(tab)).toBeUndefined();
  });
});
