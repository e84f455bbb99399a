import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extraKey, postJson, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { axeFindings, openTab, signIn, startBrowser, WEB_FLEET, type Tab } from './browser.ts';

const EMAIL = 'runtimes@web.test';
const CODE = '135790';

/**
 * "Waiting for you" in the page (docs/runtimes.md, ADR 0032): a job the account's runtime gave up on
 * is listed on the home page with a link to where it is answered; answering it there by hand takes it
 * off the list and closes the job as superseded.
 */
describe('the web frontend, when a runtime hands a job back to the owner', () => {
  let fleet: TestFleet;
  let browser: Browser;
  let tab: Tab;
  let c: TestConnector;

  beforeAll(async () => {
    [fleet, browser] = await Promise.all([
      TestFleet.start({
        only: WEB_FLEET,
        webAtPublicUrl: true,
        env: { OAN_TEST_LOGIN_CODES: `${EMAIL}=${CODE}`, RUNTIMES_SWEEP_MS: '200' },
      }),
      startBrowser(),
    ]);
    tab = await openTab(browser, fleet.url);
    const verify = await postJson(fleet.url, '/auth/oan/email/verify', {
      email: EMAIL,
      code: CODE,
      platform: 'other',
    });
    c = new TestConnector({
      baseUrl: fleet.url,
      token: await extraKey(fleet.url, verify.body.token as string),
    });
  });
  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
  });

  it('lists the job on the home page, links to the Gofer chat, and drops it once answered there', async () => {
    // a connector's runtime takes the Gofer's greeting and gives up on it (its only attempt)
    const { runtimeId } = (
      await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'desk',
        policy: { types: ['gofer_message'], maxAttempts: 1 },
      })
    ).body;
    const { goferId } = (await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body;
    const job = await waitFor(
      async () =>
        (
          await c.rest<{ job: { jobId: string; version: number } | null }>(
            'POST',
            `/runtimes/${runtimeId}/claim`,
            {
              worker: 'w1',
            },
          )
        ).body.job ?? undefined,
      { what: 'the greeting job' },
    );
    const failed = await c.rest('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
      leaseOwner: 'w1',
      version: job.version,
      outcome: 'failed',
    });
    expect(failed.status).toBe(200);

    const { page } = tab;
    await signIn(tab, EMAIL, CODE);
    const list = page.getByRole('heading', { name: 'Handed back by your runtimes' });
    await list.waitFor({ timeout: 30_000 });
    const link = page.getByRole('link', { name: /^Message from your Gofer:/ });
    expect(await link.count()).toBe(1);
    expect(await page.getByText('(desk: its worker gave up)').isVisible()).toBe(true);
    expect(await axeFindings(page)).toEqual([]);

    await link.click();
    await page.waitForURL(new RegExp(`/gofers/${goferId}$`));
    await page.getByLabel(/^Message to /).fill('I will take it from here: a flat in Lyon.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('list', { name: 'Role-chat messages' })
      .getByText('I will take it from here: a flat in Lyon.')
      .first()
      .waitFor();

    await page
      .getByRole('link', { name: /^Gofers/ })
      .first()
      .click();
    await page.getByRole('heading', { name: 'Your Gofers' }).waitFor();
    await expect.poll(() => list.count(), { timeout: 30_000 }).toBe(0);
    const jobs = await c.rest<{ jobId: string; state: string }[]>('GET', `/runtimes/${runtimeId}/jobs`);
    expect(jobs.body.find((j) => j.jobId === job.jobId)?.state).toBe('superseded');
    expect(tab.pageErrors).toEqual([]);
  });
});
