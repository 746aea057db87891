/**
 * Chromium for the dashboard's browser tests: Debian's /usr/bin/chromium driven by playwright-core
 * (CI installs it). Missing, the tests fail loudly rather than skip. Every page records console
 * errors, uncaught exceptions and any request to another origin, so a test can fail on them.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `extraArgs`: more Chromium flags (the live browser test adds --ignore-certificate-errors for its self-signed certificate). */
export async function launch(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the dashboard browser tests`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: false, // --headless=new is passed below; playwright's own flag would pick the old mode
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}

export interface Watched {
  readonly page: Page;
  /** Console errors, page errors and foreign requests seen so far. */
  readonly problems: string[];
}

/**
 * `expectedStatuses`: the browser logs "Failed to load resource: … status of 401" for every
 * 4xx answer; the tests provoke a few on purpose (a wrong password, a validation error), and
 * only those statuses are forgiven, nothing else.
 */
export async function watchedPage(browser: Browser, origin: string, viewport = { width: 1280, height: 800 }, expectedStatuses: readonly number[] = []): Promise<Watched> {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  const page = await context.newPage();
  const problems: string[] = [];
  const forgiven = new RegExp(`^Failed to load resource: the server responded with a status of (${expectedStatuses.join('|') || 'none'}) `);
  page.on('console', (m) => {
    if (m.type() === 'error' && !forgiven.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    const url = r.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    if (new URL(url).origin !== origin) problems.push(`foreign request: ${url}`);
  });
  return { page, problems };
}

/** Opens the dashboard at `base` and signs in as `admin` with the sign-in form. */
export async function signInToDashboard(page: Page, base: string, admin: { readonly email: string; readonly password: string }): Promise<void> {
  await page.goto(`${base}/_`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
