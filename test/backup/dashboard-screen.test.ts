/**
 * The Backups screen in Chromium (docs/reference/dashboard.md): reached by its navigation link, it
 * shows the destination, last sync, lag and window, the snapshots in a table, and `Back up now`
 * adds one.
 */
import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launch, signInToDashboard, watchedPage } from '../dashboard/browser.js';
import type { TestServer } from '../helpers/server.js';
import { startServerWithAdmin } from '../helpers/users.js';
import { destination } from './helpers.js';

const ADMIN = { email: 'screen-admin@example.com', password: 'admin-password-1' };

describe('the Backups screen', () => {
  const dest = destination();
  let server: TestServer | undefined;
  let dataDir: string | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    for (const f of [dest.dir, dataDir ?? '']) if (f) rmSync(f, { recursive: true, force: true });
  });

  it('shows the backup and takes a snapshot with Back up now', async () => {
    [{ server, dataDir }, browser] = await Promise.all([startServerWithAdmin(ADMIN, { args: ['--backup', dest.url] }), launch()]);
    const w = await watchedPage(browser, server.base);
    const page = w.page;
    page.setDefaultTimeout(20_000);
    await signInToDashboard(page, server.base, ADMIN);
    await page.getByRole('navigation').getByRole('link', { name: 'Backups', exact: true }).click();
    const main = page.getByRole('main');
    await main.getByRole('heading', { level: 1, name: 'Backups' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/_/backups');
    await main.getByText(dest.url).waitFor();
    const table = main.getByRole('table', { name: 'Snapshots' });
    await expect.poll(async () => table.getByRole('row').count()).toBeGreaterThanOrEqual(2); // header + the first snapshot
    const before = await table.getByRole('row').count();
    await main.getByRole('button', { name: 'Back up now' }).click();
    await expect.poll(() => main.getByRole('status').textContent()).toMatch(/Snapshot \S+ taken/);
    await expect.poll(async () => table.getByRole('row').count()).toBe(before + 1);
    await expect.poll(() => main.getByText(/Last sync/).count()).toBe(1);
    expect(w.problems).toEqual([]);
  }, 180_000);
});
