import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { extraKey, postJson, REPO_ROOT, TestConnector, waitFor, type ProcessName } from '@oan/testing';
import { buildWeb } from '../../infra/web.ts';

/**
 * The processes the pages use (a fleet started with these only): the whole v1 fleet behind the edge.
 * A process added to the fleet later (not needed by the pages) is not started for the browser tests;
 * runtimes are: the home page lists the jobs they handed back.
 */
export const WEB_FLEET: ProcessName[] = [
  'auth',
  'gofers',
  'matching',
  'conversations',
  'runtimes',
  'outbox',
  'projector',
  'gateway1',
  'gateway2',
  'edge',
];

/** Debian's chromium, installed by infra/chromium.sh when missing (a setup failure if that fails). */
function chromiumPath(): string {
  return execFileSync('bash', [join(REPO_ROOT, 'infra/chromium.sh')], { encoding: 'utf8' }).trim();
}

/** Builds the frontend when its inputs changed (as `npm test` does) and starts a headless Chromium. */
export async function startBrowser(): Promise<Browser> {
  await buildWeb();
  return launchChromium();
}

/** A headless Chromium, for a test that brings its own page. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** One signed-in operator's tab, with what the page logged and every URL it asked for. */
export interface Tab {
  context: BrowserContext;
  page: Page;
  console: string[];
  urls: string[];
  pageErrors: string[];
}

export async function openTab(browser: Browser, baseUrl: string): Promise<Tab> {
  // A fresh context is a fresh profile: no storage shared with another tab.
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const tab: Tab = { context, page, console: [], urls: [], pageErrors: [] };
  page.on('console', (m) => tab.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => tab.pageErrors.push(e.message));
  page.on('request', (r) => tab.urls.push(r.url()));
  page.on('websocket', (ws) => tab.urls.push(ws.url()));
  page.on('framenavigated', (f) => tab.urls.push(f.url()));
  return tab;
}

/** The email sign-in in the page: the email, "Send code", the code, "Sign in"; ends on the signed-in page. */
export async function signIn(tab: Tab, email: string, code: string, path = '/'): Promise<void> {
  const { page } = tab;
  await page.goto(path);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('Code').fill(code);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The JWT the tab holds (sessionStorage), to prove it is nowhere it must not be. */
export const tokenOf = (tab: Tab) =>
  tab.page.evaluate<string | undefined>(`JSON.parse(sessionStorage.getItem('oan.session') ?? '{}').token`);

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core on the current page: the serious and critical violations, as text. The script is evaluated
 * through the DevTools protocol, which the page's CSP does not govern (the page itself runs no inline script).
 */
export async function axeFindings(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate<{ id: string; impact: string | null; targets: string[] }[]>(
    `axe.run(document).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, targets: v.nodes.map((n) => JSON.stringify(n.target)) })))`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.targets.join(' ')}`);
}

/**
 * With WEB_SCREENSHOTS=1, saves the page as docs/screenshots/<name>.png (the README's pictures,
 * taken by journey.e2e.test.ts only); otherwise nothing, so a test run leaves the work tree as it was.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.WEB_SCREENSHOTS !== '1') return;
  await page.screenshot({ path: join(REPO_ROOT, 'docs/screenshots', `${name}.png`), fullPage: true });
}

export { waitFor };

/** One pixel of a picture: its red, green and blue (0–255) at column x, row y. */
export type Pixel = (x: number, y: number) => [number, number, number];

const gradient: Pixel = (x, y) => [40 + x * 8, 90 + y * 8, 200];

/**
 * A real, decodable PNG (w×h, a gradient unless `pixel` paints it), so a page can show the photo
 * (naturalWidth proves it loaded).
 */
export function png(w: number, h: number, pixel: Pixel = gradient): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Array.from({ length: h }, (_, y) =>
    Buffer.from([0, ...Array.from({ length: w }, (_, x) => pixel(x, y)).flat()]),
  );
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** One operator of a two-sided page test: a connector holding an extra key, their Gofer and their JWT. */
export interface Side {
  c: TestConnector;
  gofer: string;
  jwt: string;
}

/** An account signed in with its QA code (standing in for the emailed code), a connector key and a Gofer. */
export async function joinWithGofer(url: string, email: string, code: string): Promise<Side> {
  const verify = await postJson(url, '/auth/oan/email/verify', { email, code, platform: 'other' });
  if (verify.status !== 200) throw new Error(`verify ${email}: ${verify.text}`);
  const jwt = verify.body.token as string;
  const c = new TestConnector({ baseUrl: url, token: await extraKey(url, jwt) });
  await c.connect();
  const created = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
  return { c, gofer: created.body.goferId, jwt };
}

/** Uploads a file to one of the side's Gofer's upload routes, as the owner's page does (201 or it throws). */
export async function uploadToGofer(
  url: string,
  side: Side,
  kind: 'attachments' | 'photos',
  file: { name: string; type: string; bytes: Buffer },
): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([file.bytes], { type: file.type }), file.name);
  const res = await fetch(`${url}/api/v1/gofers/${side.gofer}/${kind}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${side.jwt}` },
    body: form,
  });
  if (res.status !== 201) throw new Error(`upload ${file.name}: ${res.status} ${await res.text()}`);
}
