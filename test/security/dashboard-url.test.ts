/**
 * Issue #26 item 9, in Chromium: a bad percent-escape in a dashboard URL made `decodeURIComponent`
 * throw while rendering, leaving a blank page. The router now reads such a URL as malformed and
 * the app shows its not-found screen (and an unknown screen does too), with the navigation intact.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, signInToDashboard, type Watched, watchedPage } from '../dashboard/browser.js';
import { ADMIN, startDashboardServer, type DashboardFixture } from '../dashboard/fixture.js';

let f: DashboardFixture;
let browser: Browser;
let w: Watched;
let page: Page;

beforeAll(async () => {
  [f, browser] = await Promise.all([startDashboardServer(0), launch()]);
  w = await watchedPage(browser, f.server.base);
  page = w.page;
  page.setDefaultTimeout(15_000);
  await signInToDashboard(page, f.server.base, ADMIN);
  await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).waitFor();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await f?.dispose();
});

describe('the dashboard survives malformed URLs (issue #26)', () => {
  it.each(['/_/tables/%E0%A4%A', '/_/%', '/_/users/%zz', '/_/no-such-screen'])(
    '%s shows the not-found screen, not a blank page',
    async (path) => {
      await page.goto(`${f.server.base}${path}`);
      await page.getByRole('main').getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      expect(await page.getByRole('navigation').getByRole('link', { name: 'Overview' }).isVisible()).toBe(true);
      // The way back works.
      await page.getByRole('link', { name: 'Back to the overview' }).click();
      await page.getByRole('main').getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      expect(w.problems).toEqual([]);
    },
    60_000,
  );
});
