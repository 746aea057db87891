/**
 * The Overview's Processes table in Chromium with `serve --workers 2` (docs/reference/dashboard.md):
 * one row for the primary and one per worker, with their figures; found by role and accessible
 * name only. The single-process screen (no table) is test/dashboard/browser.test.ts's.
 */
import { rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, signInToDashboard, watchedPage } from '../dashboard/browser.js';
import type { TestServer } from '../helpers/server.js';
import { startServerWithAdmin } from '../helpers/users.js';

const ADMIN = { email: 'root@example.com', password: 'admin-pass-1234' };
let server: TestServer;
let dataDir = '';
let browser: Browser;
beforeAll(async () => {
  [{ server, dataDir }, browser] = await Promise.all([startServerWithAdmin(ADMIN, { workers: 2 }), launch()]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.dispose();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('dashboard with two workers', { timeout: 60_000 }, () => {
  it('shows the primary and each worker in the Processes table', async () => {
    const w = await watchedPage(browser, server.base);
    const page = w.page;
    page.setDefaultTimeout(20_000);
    await signInToDashboard(page, server.base, ADMIN);
    const table = page.getByRole('main').getByRole('table', { name: 'Processes' });
    await table.waitFor();
    // A worker that does not answer the primary's gathering within 1 s (busy: a loaded machine)
    // is missing from that reading; the screen reads again every 5 s.
    await expect.poll(() => table.getByRole('rowheader').count(), { timeout: 30_000 }).toBe(3);
    const names = await table.getByRole('rowheader').allTextContents();
    expect(names[0]).toBe('primary (writer)');
    expect(names.slice(1)).toHaveLength(2);
    for (const n of names.slice(1)) expect(n).toMatch(/^worker \d+$/);
    const headers = await table.getByRole('columnheader').allTextContents();
    expect(headers).toEqual(['process', 'requests/s', 'streams', 'memory (RSS)', 'heap used', 'event-loop delay p99']);
    // Each row's memory is shown in bytes' units, and its event-loop delay in ms.
    for (const row of await table.getByRole('row').all()) {
      const cells = await row.getByRole('cell').allTextContents();
      if (cells.length === 0) continue; // the header row
      expect(cells[2]).toMatch(/\d+(\.\d+)? (B|KB|MB|GB|KiB|MiB|GiB)/);
      expect(cells[4]).toMatch(/^\d+(\.\d+)? ms$/);
    }
    expect(w.problems).toEqual([]);
  });
});
