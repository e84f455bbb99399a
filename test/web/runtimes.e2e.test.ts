import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, TestFleet } from '@oan/testing';
import { axeFindings, openTab, signIn, startBrowser, tokenOf, WEB_FLEET, type Tab } from './browser.ts';

const EMAIL = 'runtimes@web.test';
const CODE = '135791';

/** The Runtimes pages: the account's runtimes, and a runtime's jobs with their state, lease and progress. */
describe('the web frontend, when a connector of the account works through a runtime', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let tab: Tab;

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({
        only: [...WEB_FLEET, 'runtimes'],
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

  it('lists the runtime and its leased job with owner, lease and progress, filtered by state', async () => {
    for (const path of ['/runtimes', '/runtimes/x']) {
      const res = await fetch(`${fleet.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
    }
    const { page } = tab;
    await signIn(tab, EMAIL, CODE);
    await page.getByRole('link', { name: 'Runtimes' }).click();
    await page.getByRole('heading', { name: 'Runtimes', level: 1 }).waitFor();
    await page.getByText('No runtime is registered').waitFor();

    // a connector of the account (here with the operator's own token) registers a runtime, a Gofer's
    // greeting becomes its job, and a worker claims it and reports progress
    const token = (await tokenOf(tab))!;
    const registered = await postJson(
      fleet.url,
      '/runtimes',
      {
        name: 'desk',
        policy: { types: ['gofer_message'], leaseSeconds: 600 },
      },
      token,
    );
    expect(registered.status).toBe(201);
    const runtimeId = (registered.body as { runtimeId: string }).runtimeId;
    expect((await postJson(fleet.url, '/gofers', { locale: 'en' }, token)).status).toBe(201);
    const claimed = await postJson(
      fleet.url,
      `/runtimes/${runtimeId}/claim`,
      { worker: 'worker-a', wait: 20 },
      token,
    );
    const job = (claimed.body as { job: { jobId: string; version: number; leaseUntil: string } | null }).job!;
    expect(job).not.toBeNull();
    const beat = await postJson(
      fleet.url,
      `/runtimes/${runtimeId}/jobs/${job.jobId}/heartbeat`,
      {
        leaseOwner: 'worker-a',
        version: job.version,
        progress: { percent: 40, note: 'drafting the answer' },
      },
      token,
    );
    expect(beat.status).toBe(200);

    await page.reload();
    await page.getByRole('link', { name: 'desk' }).waitFor();
    const list = page.getByRole('table', { name: 'Your runtimes' });
    expect(await list.getByRole('row').nth(1).innerText()).toContain('gofer_message');
    expect(await axeFindings(page)).toEqual([]);

    await page.getByRole('link', { name: 'desk' }).click();
    await page.getByRole('heading', { name: 'Runtime desk' }).waitFor();
    const row = page
      .getByRole('table', { name: /^Jobs of this runtime/ })
      .getByRole('row')
      .nth(1);
    const cells = row.getByRole('cell');
    await cells.first().waitFor();
    expect(await cells.allInnerTexts()).toEqual([
      expect.stringMatching(/^\d+$/),
      'gofer_message',
      'leased',
      '1',
      'worker-a',
      expect.any(String),
      '40 %, drafting the answer',
    ]);
    expect(await cells.nth(5).locator('time').getAttribute('datetime')).toBe(
      (beat.body as { job: { leaseUntil: string } }).job.leaseUntil,
    );
    expect(await axeFindings(page)).toEqual([]);

    const state = page.getByLabel('State');
    await state.selectOption('handled');
    await page.getByRole('status').filter({ hasText: 'No handled job.' }).waitFor();
    await state.selectOption('leased');
    await cells.first().waitFor();
    expect(await cells.nth(4).innerText()).toBe('worker-a');
    expect(await axeFindings(page)).toEqual([]);

    // the worker gives it back: Refresh shows it queued with no holder
    const released = await postJson(
      fleet.url,
      `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`,
      { leaseOwner: 'worker-a', version: job.version, outcome: 'released' },
      token,
    );
    expect(released.status).toBe(200);
    await state.selectOption('');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => cells.nth(2).innerText()).toBe('queued');
    expect(await cells.nth(4).innerText()).toBe('—');
  });
});
