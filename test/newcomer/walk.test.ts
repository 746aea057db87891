/**
 * The newcomer's first hour, scripted (issue #27 "Must show"): what the README says, in a temporary
 * folder outside the repository. `init`, `dev`, break the config and fix it, a type error reported
 * with file and line, sign up, the README's generated-client snippet type-checked and run, the
 * admin command `dev` prints, an admin creating a row in the dashboard (Chromium), then Ctrl-C —
 * and nothing of it left running.
 *
 * Independent of how `init` writes the tablebase dependency: when `node_modules/tablebase` is not
 * there after init, the walk links it to this repository (what `npm install` would do offline), and
 * links TypeScript and @types/node for `npm run typecheck`.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, watchedPage } from '../dashboard/browser.js';
import { killGroup, marker, markedProcesses } from '../helpers/processes.js';
import { freePort, ROOT } from '../helpers/server.js';

const WALK = 'TABLEBASE_TEST_WALK';
const walkId = randomBytes(6).toString('hex');
const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
const tsxLoader = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx/esm')).href;
const USER = { email: 'ada@example.com', password: 'correct horse' };
const ADMIN = { email: 'admin@example.com', password: 'a long admin password' };

/** The shell's environment without this repository's secrets or settings, as a newcomer's shell has. */
function shellEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...marker(), [WALK]: walkId, NO_COLOR: '1' };
  for (const k of ['JWT_SECRET', 'PASSWORD_SECRET', 'DATABASE_URL', 'REDIS_URL', 'TABLEBASE_PROJECT', 'TABLEBASE_DATA', 'PORT', 'HOST', 'LOG_FORMAT']) delete env[k];
  return env;
}

const run = (file: string, args: string[], cwd: string, extra: string[] = []) =>
  new Promise<{ code: number; output: string }>((res) =>
    execFile(process.execPath, [...extra, file, ...args], { cwd, timeout: 180_000, env: shellEnv() }, (err, stdout, stderr) =>
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    ),
  );

/** The README's generated-client snippet: the first ```ts block after "**The generated client.**". */
function readmeClientSnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('**The generated client.**');
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !m) throw new Error('README.md has no generated-client snippet');
  return m[1]!;
}

/** Whether any live (non-zombie) process is left in the group. */
function groupAlive(pgid: number): boolean {
  try {
    const out = execFileSync('ps', ['-o', 'stat=', '-g', String(pgid)], { encoding: 'utf8' });
    return out.split('\n').some((s) => s.trim() && !s.trim().startsWith('Z'));
  } catch {
    return false; // ps exits 1 when no process matched
  }
}

let tmp: string;
let app: string;
let dev: ChildProcess | undefined;
let log = '';
let base: string;
let browser: Browser | undefined;
let config: string;

const health = () =>
  fetch(`${base}/health`).then(
    (r) => r.status === 200,
    () => false,
  );

/** Waits until `test` holds for the dev output written after `from` (no time is asserted). */
async function logAfter(from: number, test: RegExp, what: string, ms = 150_000): Promise<string> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    const m = test.exec(log.slice(from));
    if (m) return m[0];
    if (dev?.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`dev never printed ${what}:\n${log.slice(from)}`);
}

async function until(check: () => Promise<boolean>, what: string, ms = 150_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}:\n${log}`);
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tb-newcomer-'));
  app = join(tmp, 'my-app');
  const made = await run(join(ROOT, 'bin/tablebase.mjs'), ['init', 'my-app'], tmp);
  expect(made.code, made.output).toBe(0);
  const modules = join(app, 'node_modules');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  mkdirSync(join(modules, '@types'), { recursive: true });
  if (!existsSync(join(modules, 'tablebase'))) symlinkSync(ROOT, join(modules, 'tablebase'), 'dir');
  if (!existsSync(join(modules, '.bin/tablebase'))) symlinkSync(join('..', 'tablebase', 'bin', 'tablebase.mjs'), join(modules, '.bin/tablebase'));
  symlinkSync(join(ROOT, 'node_modules/typescript'), join(modules, 'typescript'), 'dir');
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(modules, '@types/node'), 'dir');
  config = readFileSync(join(app, 'tablebase.config.ts'), 'utf8');
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (dev?.pid && dev.exitCode === null) killGroup(dev.pid);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('a newcomer following the README', { timeout: 300_000 }, () => {
  it('npm run dev: serves, prints the dashboard URL and the exact admin command', async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Its own process group, as a terminal's foreground job: Ctrl-C later goes to the whole group.
    dev = spawn(process.execPath, [join(app, 'node_modules/.bin/tablebase'), 'dev', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: app,
      env: shellEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    dev.stdout!.on('data', (d) => (log += d));
    dev.stderr!.on('data', (d) => (log += d));
    await until(health, 'dev to serve');
    await logAfter(0, new RegExp(`Dashboard: ${base.replace(/[.]/g, '\\.')}/_`), 'the dashboard URL');
    await logAfter(0, /first admin: npx tablebase admin create --project \. --table admins --email/, 'the admin command');
    await logAfter(0, /\[dev\] type check: no errors/, 'a clean type check');
  });

  it('a syntax error stops the server; dev says so, waits, and serves again once the file is fixed', async () => {
    let from = log.length;
    writeFileSync(join(app, 'tablebase.config.ts'), `${config}\nexport const broken = ;\n`);
    await logAfter(from, /exited with code 1\. Fix the problem and save a file/, 'that the server exited');
    expect(await health()).toBe(false);
    from = log.length;
    writeFileSync(join(app, 'tablebase.config.ts'), config);
    await logAfter(from, /Tablebase listening/, 'the restart after the fix');
    await until(health, 'dev to serve again');
  });

  it('a type error is reported with file and line, and the server keeps serving', async () => {
    const from = log.length;
    const typo = config.replace('row.id === jwt?.userId', 'row.author === jwt?.userId');
    expect(typo).not.toBe(config);
    writeFileSync(join(app, 'tablebase.config.ts'), typo);
    const line = typo.split('\n').findIndex((l) => l.includes('row.author')) + 1;
    await logAfter(from, new RegExp(`type check: 1 error[^\\n]*\\n\\s+tablebase\\.config\\.ts:${line}:\\d+\\s+TS2339: Property 'author'`), 'the type error');
    await until(health, 'dev to serve with the type error');
    const fixed = log.length;
    writeFileSync(join(app, 'tablebase.config.ts'), config);
    await logAfter(fixed, /type check: no errors/, 'a clean type check after the fix');
    await until(health, 'dev to serve after the fix');
  });

  it('signs up with the README curl body', async () => {
    const r = await fetch(`${base}/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'signUp', table: 'users', ...USER }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
  });

  it("the README's generated-client snippet type-checks (npm run typecheck) and runs", async () => {
    const gen = await run(join(app, 'node_modules/.bin/tablebase'), ['gen', 'client'], app);
    expect(gen.code, gen.output).toBe(0);
    expect(existsSync(join(app, 'tablebase-client.ts'))).toBe(true);
    writeFileSync(join(app, 'try-client.ts'), readmeClientSnippet().replace('http://localhost:8080', base));
    const typecheck = await run(tsc, ['-p', '.'], app);
    expect(typecheck.code, typecheck.output).toBe(0);
    const ran = await run(join(app, 'try-client.ts'), [], app, ['--import', tsxLoader]);
    expect(ran.code, ran.output).toBe(0);
    expect(ran.output).toMatch(/^nt_\S+ 1\n1\n$/);
  });

  it('creates an admin with the printed command and a row in the dashboard (Chromium)', async () => {
    const printed = /first admin: (npx tablebase admin create [^\n]*?--password '[^']*')/.exec(log)![1]!;
    const command = printed
      .replace('npx tablebase', 'node_modules/.bin/tablebase')
      .replace('you@example.com', ADMIN.email)
      .replace(/--password '[^']*'/, `--password '${ADMIN.password}'`);
    const made = await new Promise<{ code: number; output: string }>((res) =>
      execFile('sh', ['-c', command], { cwd: app, env: shellEnv(), timeout: 120_000 }, (err, out, errOut) => res({ code: err ? 1 : 0, output: out + errOut })),
    );
    expect(made.code, made.output).toBe(0);

    const signIn = await fetch(`${base}/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'signIn', table: 'users', ...USER }) });
    const session = (await signIn.json()) as { data: { accessToken: string; user: { id: string } } };

    browser = await launch();
    const w = await watchedPage(browser, base);
    const page = w.page;
    page.setDefaultTimeout(60_000);
    await page.goto(`${base}/_`);
    await page.getByText('No admin yet?').waitFor();
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Tables' }).click();
    const main = page.getByRole('main');
    await main.getByRole('link', { name: 'notes', exact: true }).click();
    await main.getByRole('button', { name: 'New row' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('text', { exact: true }).fill('Written by the admin');
    await dialog.getByLabel('ownerId', { exact: true }).selectOption(session.data.user.id); // a picker of users
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(w.problems).toEqual([]);

    const body = encodeURIComponent(JSON.stringify({ table: 'notes', where: { text: { eq: 'Written by the admin' } } }));
    const mine = await fetch(`${base}/db/list?body=${body}`, { headers: { authorization: `Bearer ${session.data.accessToken}` } });
    const listed = (await mine.json()) as { data: { items: { ownerId: string }[] } };
    expect(listed.data.items).toEqual([expect.objectContaining({ ownerId: session.data.user.id })]);
  });

  it("the verification email's link opens on the dev server and verifies the address", async () => {
    const asked = await fetch(`${base}/auth/verify-email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'users', email: USER.email }) });
    expect(asked.status, await asked.clone().text()).toBeLessThan(300);
    const outbox = join(app, '.tablebase/outbox');
    let link = '';
    await until(async () => {
      const files = existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.json')) : [];
      const texts = files.map((f) => (JSON.parse(readFileSync(join(outbox, f), 'utf8')) as { text: string | null }).text ?? '');
      link = /(http\S*\/_\/confirm\/verify\?token=[A-Za-z0-9%_.~-]+)/.exec(texts.join('\n'))?.[1] ?? '';
      return link !== '';
    }, 'the verification email in the outbox');
    expect(link.startsWith(`${base}/_/confirm/verify?token=`)).toBe(true); // the server's own origin, port included

    const w = await watchedPage(browser!, base);
    await w.page.goto(link);
    await w.page.getByRole('button', { name: 'Verify my email' }).click();
    await expect.poll(() => w.page.getByRole('status').textContent()).toBe('Your email address is verified.');
    expect(w.problems).toEqual([]);
  });

  it('Ctrl-C stops dev and its server, and nothing is left running', async () => {
    const pid = dev!.pid!;
    const exited = new Promise<number | null>((r) => (dev!.exitCode !== null ? r(dev!.exitCode) : dev!.once('exit', (code) => r(code))));
    process.kill(-pid, 'SIGINT'); // what a terminal does on Ctrl-C: the foreground process group
    expect(await exited).toBe(0);
    await until(async () => markedProcesses(walkId, WALK).length === 0, 'every process of the walk to end', 30_000);
    await until(async () => !groupAlive(pid), 'the process group to empty', 30_000);
    expect(await health()).toBe(false);
  });
});
