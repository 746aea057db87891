/**
 * End-to-end: `tablebase init DIR` in a temp folder outside the repository, then the project's own
 * `node_modules/.bin/tablebase dev` serves it and answers requests (issue #16 item 3). The new
 * project reaches `tablebase` the way an installed one does: through `node_modules/tablebase`, a
 * link to this repository (what `npm install <path>` makes), never through the repository's own
 * package scope.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecrets } from '../src/auth/secrets.js';
import { freePort, ROOT } from './helpers/server.js';

const run = (file: string, args: string[], cwd: string) =>
  new Promise<{ code: number; output: string }>((res) =>
    execFile(process.execPath, [file, ...args], { cwd, timeout: 120_000, env: cleanEnv() }, (err, stdout, stderr) =>
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    ),
  );

/** The test's environment without secrets, so the project's `.env` is what the server reads. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'json' };
  for (const k of ['JWT_SECRET', 'PASSWORD_SECRET', 'DATABASE_URL', 'REDIS_URL', 'TABLEBASE_PROJECT', 'TABLEBASE_DATA', 'PORT', 'HOST']) delete env[k];
  return env;
}

let tmp: string;
let dir: string;
let initOutput: string;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tb-init-'));
  dir = join(tmp, 'demo');
  const r = await run(join(ROOT, 'bin/tablebase.mjs'), ['init', dir], tmp);
  expect(r.code, r.output).toBe(0);
  initOutput = r.output;
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tablebase init', () => {
  it('writes config, package.json, tsconfig, README, .gitignore and a 0600 .env with valid random secrets', () => {
    for (const f of ['tablebase.config.ts', 'package.json', 'tsconfig.json', 'README.md', '.gitignore', '.env']) expect(initOutput).toContain(`+ ${f}`);
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    const secrets = loadSecrets({}, dir);
    expect(secrets.jwtSecret).not.toBe(secrets.passwordSecret);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toMatch(/^\.tablebase\/$[\s\S]*^\.env$/m);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'demo', type: 'module', scripts: { dev: 'tablebase dev' }, dependencies: { tablebase: `file:${ROOT}` } });
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npm run dev');
    expect(readme).toContain('/auth/sign-up');
    expect(realpathSync(join(dir, 'node_modules/tablebase'))).toBe(realpathSync(ROOT));
  });

  it('tsconfig.json type-checks the config against the installed package, and catches a mistake', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const ok = await run(tsc, ['-p', '.'], dir);
    expect(ok.code, ok.output).toBe(0);
    const copy = join(tmp, 'broken');
    mkdirSync(copy);
    for (const f of ['tsconfig.json', 'package.json']) writeFileSync(join(copy, f), readFileSync(join(dir, f)));
    writeFileSync(join(copy, 'tablebase.config.ts'), readFileSync(join(dir, 'tablebase.config.ts'), 'utf8').replace('column.boolean().default(false)', "column.boolean().default('no')"));
    symlinkSync(join(dir, 'node_modules'), join(copy, 'node_modules'));
    const bad = await run(tsc, ['-p', '.'], copy);
    expect(bad.code).not.toBe(0);
    expect(bad.output).toContain('tablebase.config.ts(');
  });

  it('refuses a non-empty folder with one line, and with --force keeps every existing file', async () => {
    const before = readFileSync(join(dir, '.env'), 'utf8');
    const refused = await run(join(ROOT, 'bin/tablebase.mjs'), ['init', dir], tmp);
    expect(refused.code).toBe(2);
    expect(refused.output.trim()).toMatch(/^tablebase: \S+ is not empty; use --force/);
    const forced = await run(join(ROOT, 'bin/tablebase.mjs'), ['init', dir, '--force'], tmp);
    expect(forced.code, forced.output).toBe(0);
    expect(forced.output).toContain('= tablebase.config.ts (exists, kept)');
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(before);
  });

  describe('served by its own `tablebase dev`', () => {
    let proc: ChildProcess;
    let base: string;
    let log = '';
    beforeAll(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      proc = spawn(process.execPath, [join(dir, 'node_modules/.bin/tablebase'), 'dev', '--host', '127.0.0.1', '--port', String(port)], {
        cwd: dir,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proc.stdout!.on('data', (d) => (log += d));
      proc.stderr!.on('data', (d) => (log += d));
      for (let i = 0; i < 300; i++) {
        if (
          await fetch(`${base}/health`).then(
            (r) => r.ok,
            () => false,
          )
        )
          return;
        if (proc.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`dev did not start:\n${log}`);
    }, 180_000);
    afterAll(async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
    });

    it('signs up, creates a note, lists it, and refuses a note without a token', async () => {
      const post = (path: string, body: unknown, token?: string) =>
        fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      const signUp = await post('/auth/sign-up', { type: 'signUp', table: 'users', email: 'ada@example.com', password: 'correct horse' });
      expect(signUp.status).toBe(200);
      const token = ((await signUp.json()) as { data: { accessToken: string } }).data.accessToken;
      const made = await post('/db', { table: 'notes', object: { text: 'Hello' } }, token);
      expect(made.status).toBe(200);
      expect(await made.json()).toMatchObject({ data: { text: 'Hello', isDone: false } });
      const list = await fetch(`${base}/db/list?body=${encodeURIComponent(JSON.stringify({ table: 'notes' }))}`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await list.json()) as { data: { items: unknown[] } }).data.items).toHaveLength(1);
      expect((await post('/db', { table: 'notes', object: { text: 'x' } })).status).toBe(403);
      // dev generated the first migration beside the config.
      expect(statSync(join(dir, 'migrations')).isDirectory()).toBe(true);
    });
  });
});
