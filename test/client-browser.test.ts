/**
 * `tablebase/client` in Chromium (issue #25), bundled for the browser by esbuild from
 * src/client/index.ts: sign-up and sign-in, a reload that stays signed in (the localStorage
 * store), a live list over `/db/live` that updates, a server restart the live query survives with
 * no code in the page (reconnect, resubscribe, current result), and calls after the access token
 * expired that succeed through the refresh (test/fixtures/short-token: 2-second tokens).
 *
 * The page is served from the server's own origin: Playwright answers `/app/*` with the test page
 * and the bundle, every other request goes to the real server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UntypedClient } from '../src/client/index.js';
import { chromium } from 'playwright-core';
import { CHROMIUM } from './dashboard/browser.js';
import { freePort, ROOT, secret } from './helpers/server.js';

/** What the test page puts on window. */
interface PageWindow {
  client: UntypedClient;
  seen: string[][];
  watch(): Promise<void>;
  ready?: boolean;
  failed?: string;
}

const PROJECT = join(ROOT, 'test/fixtures/short-token');
const env = { ...process.env, JWT_SECRET: secret(), PASSWORD_SECRET: secret(), LOG_LEVEL: 'warn' };

let data: string;
let port: number;
let base: string;
let server: ChildProcess | undefined;
let browser: Browser | undefined;
let bundle: string;

async function startServer(): Promise<void> {
  server = spawn(process.execPath, [join(ROOT, 'bin/tablebase.mjs'), 'serve', '--project', PROJECT, '--data', data, '--host', '127.0.0.1', '--port', String(port)], {
    cwd: ROOT,
    env,
    stdio: 'ignore',
  });
  for (let i = 0; i < 600; i++) {
    if (server.exitCode !== null) throw new Error('server exited');
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

async function stopServer(): Promise<void> {
  const s = server;
  server = undefined;
  if (!s || s.exitCode !== null) return;
  const exited = new Promise((r) => s.once('exit', r));
  s.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (s.exitCode === null) s.kill('SIGKILL');
}

const PAGE = `<!doctype html><meta charset="utf-8"><script type="module">
import * as tb from '/app/client.js';
window.tb = tb;
// Tokens live 2 s here: refreshBefore 0 refreshes them when they expire, not a minute ahead.
window.client = tb.createClient({ baseUrl: location.origin, refreshBefore: 0 });
window.seen = [];
window.watch = async () => {
  try {
    for await (const page of window.client.table('docs').streamList({ order_by: [{ column: 'title' }] })) window.seen.push(page.items.map((d) => d.title));
  } catch (err) {
    window.failed = err.code + ': ' + err.message;
  }
};
window.ready = true;
</script>`;

async function openPage(page: Page): Promise<void> {
  await page.goto(`${base}/app/index.html`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
}

/** The titles of the live list's latest payload. */
const latest = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).seen.at(-1) ?? null);

async function createDoc(title: string): Promise<void> {
  const r = await fetch(`${base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'docs', object: { title } }) });
  expect(r.status).toBe(200);
}

async function until(what: string, check: () => Promise<boolean>, ms = 60_000, detail?: () => Promise<string>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${detail ? `: ${await detail()}` : ''}`);
}

beforeAll(async () => {
  data = mkdtempSync(join(tmpdir(), 'tb-client-browser-'));
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const out = await build({ entryPoints: [join(ROOT, 'src/client/index.ts')], bundle: true, format: 'esm', platform: 'browser', target: 'chrome110', write: false, minify: true });
  bundle = out.outputFiles[0]!.text;
  await startServer();
  // Chromium's Local Network Access checks treat a page Playwright fulfils as public and block its
  // WebSocket to 127.0.0.1 (fetch is let through); a page served by a real server is not affected.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: false,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-features=LocalNetworkAccessChecks',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopServer();
  rmSync(data, { recursive: true, force: true });
}, 60_000);

describe('tablebase/client in Chromium', () => {
  it('signs up and in, stays signed in across a reload, keeps a live list through a restart and expired tokens', async () => {
    const context = await browser!.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const frames: string[] = [];
    page.on('websocket', (ws) => {
      ws.on('framesent', (f) => frames.push(`> ${String(f.payload).slice(0, 200)}`));
      ws.on('framereceived', (f) => frames.push(`< ${String(f.payload).slice(0, 200)}`));
      ws.on('close', () => frames.push('closed'));
    });
    await context.route(`${base}/app/**`, (route) => {
      const js = route.request().url().endsWith('/client.js');
      return route.fulfill({ status: 200, contentType: js ? 'text/javascript' : 'text/html', body: js ? bundle : PAGE });
    });
    await openPage(page);

    const email = 'ada@example.com';
    const signedUp = await page.evaluate(
      (e) => (window as unknown as PageWindow).client.auth.signUp({ table: 'members', email: e, password: 'correct horse battery' }).then((s) => (s.user as { email: string }).email),
      email,
    );
    expect(signedUp).toBe(email);
    const signedIn = await page.evaluate(
      (e) => (window as unknown as PageWindow).client.auth.signIn({ table: 'members', email: e, password: 'correct horse battery' }).then((s) => (s.user as { email: string }).email),
      email,
    );
    expect(signedIn).toBe(email);

    await page.reload();
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const kept = await page.evaluate(() => (window as unknown as PageWindow).client.auth.session().then((s) => (s?.user as { email?: string } | undefined)?.email ?? null));
    expect(kept).toBe(email);

    await createDoc('a');
    await page.evaluate(() => void (window as unknown as PageWindow).watch());
    const detail = async () => `${JSON.stringify(await page.evaluate(() => [(window as unknown as PageWindow).seen, (window as unknown as PageWindow).failed]))}\n${frames.join('\n')}`;
    await until('the first payload', async () => JSON.stringify(await latest(page)) === '["a"]', 60_000, detail);
    await createDoc('b');
    await until('the live list to show b', async () => JSON.stringify(await latest(page)) === '["a","b"]');

    // The server goes away and comes back on the same port: the page does nothing.
    await stopServer();
    await startServer();
    await createDoc('c');
    await until('the live list to show c after the restart', async () => JSON.stringify(await latest(page)) === '["a","b","c"]', 90_000, detail);

    // By now the first access token (2 s) has long expired: a call still succeeds, through the refresh.
    const before = await page.evaluate(() => (window as unknown as PageWindow).client.auth.session().then((s) => s?.accessToken));
    await new Promise((r) => setTimeout(r, 2500));
    const count = await page.evaluate(() => (window as unknown as PageWindow).client.table('docs').count());
    expect(count).toBe(3);
    const after = await page.evaluate(() => (window as unknown as PageWindow).client.auth.session().then((s) => s?.accessToken));
    expect(after).not.toBe(before);
    expect(errors).toEqual([]);
    await context.close();
  }, 240_000);
});
