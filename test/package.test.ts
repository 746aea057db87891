/**
 * The package as a user gets it (issue #25, docs/install.md): `npm pack` this repository, install
 * the tarball into an empty folder (its dependencies from the registry), `npx tablebase init app`,
 * serve the new project from the installed copy (compiled JavaScript, no tsx, no repository) and
 * use it; the tarball holds no tests, benchmarks, fixtures or TypeScript sources, and the `exports`
 * types resolve for a TypeScript user.
 *
 * Slow by nature (the build, an install from the registry): one file, long timeouts. The install
 * skips better-sqlite3's compile (about 80 s here) by copying this repository's build of the same
 * version into place, when the versions match; TABLEBASE_PACK_COMPILE=1 runs the plain install.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, ROOT } from './helpers/server.js';

const MINUTES = 60_000;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without the repository's secrets and settings: the project's .env is what counts. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'json', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  for (const k of Object.keys(env)) if (/^(JWT_SECRET|PASSWORD_SECRET|DATABASE_URL|REDIS_URL|TABLEBASE_.*|PORT|HOST|npm_package_.*|npm_lifecycle_.*|INIT_CWD)$/.test(k)) delete env[k];
  return env;
}

const run = (cmd: string, args: string[], cwd: string, timeout = 5 * MINUTES) =>
  new Promise<Ran>((res) =>
    execFile(cmd, args, { cwd, timeout, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      res({ code: err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0, stdout, stderr }),
    ),
  );

const version = (dir: string) => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;

let tmp: string;
let home: string; // the empty folder the tarball is installed into
let files: string[];
let server: ChildProcess | undefined;
let serverOutput = '';

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'tb-package-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', tmp], ROOT, 5 * MINUTES);
  expect(packed.code, packed.stderr).toBe(0);
  const info = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[])[0]!;
  files = info.files.map((f) => f.path);
  home = join(tmp, 'home');
  mkdirSync(home);
  writeFileSync(join(home, 'package.json'), JSON.stringify({ name: 'home', private: true, type: 'module' }));
  const tgz = join(tmp, info.filename);
  const repoSqlite = join(ROOT, 'node_modules/better-sqlite3');
  const reuse = !process.env.TABLEBASE_PACK_COMPILE && existsSync(join(repoSqlite, 'build/Release/better_sqlite3.node'));
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...(reuse ? ['--ignore-scripts'] : []), tgz], home, 10 * MINUTES);
  expect(installed.code, installed.stderr).toBe(0);
  const sqlite = join(home, 'node_modules/better-sqlite3');
  if (reuse) {
    // Same version and same Node: the repository's compiled addon is the one the install would build.
    if (version(sqlite) === version(repoSqlite)) cpSync(join(repoSqlite, 'build'), join(sqlite, 'build'), { recursive: true });
    else {
      const rebuilt = await run('npm', ['rebuild', 'better-sqlite3'], home, 10 * MINUTES);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
    }
  }
}, 20 * MINUTES);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, MINUTES);

describe('the npm package', () => {
  it('ships compiled JavaScript, types and the built dashboard, and no tests, benchmarks, fixtures or sources', () => {
    for (const f of [
      'bin/tablebase.mjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/dashboard/prebuilt/app.js',
      'dist/dashboard/prebuilt/app.css',
      'dist/cli/index.js',
    ]) {
      expect(files).toContain(f);
    }
    const unwanted = files.filter((f) => /(^|\/)(test|tests|bench|fixtures|examples|src|node_modules)\//.test(f) || /\.test\.|\.spec\./.test(f) || (/\.tsx?$/.test(f) && !f.endsWith('.d.ts')));
    expect(unwanted).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(home, 'node_modules/tablebase/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(existsSync(join(home, 'node_modules/tsx'))).toBe(false);
  });

  it(
    '`npx tablebase init app` makes a project that depends on the released version, not a path',
    async () => {
      const r = await run('npx', ['--no-install', 'tablebase', 'init', 'app'], home, 2 * MINUTES);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const pkg = JSON.parse(readFileSync(join(home, 'app/package.json'), 'utf8')) as { dependencies: Record<string, string> };
      expect(pkg.dependencies.tablebase).toBe(`^${version(ROOT)}`);
      expect(existsSync(join(home, 'app/node_modules/tablebase'))).toBe(false);
    },
    3 * MINUTES,
  );

  it(
    '`exports` types resolve for TypeScript: the definition API and the client',
    async () => {
      writeFileSync(
        join(home, 'check.ts'),
        `import { column, defineProject, table } from 'tablebase';
import { createClient, TablebaseError } from 'tablebase/client';
const notes = table('notes', { prefix: 'nt', columns: { text: column.text() } });
export default defineProject({ name: 'x', tables: [notes] });
const client = createClient({ baseUrl: 'http://localhost:8080' });
export const count: Promise<number> = client.table('notes').count();
export const isError = (e: unknown) => e instanceof TablebaseError && e.code === 'NOT_FOUND';
// @ts-expect-error baseUrl is required: proves the types are real, not any
createClient({});
`,
      );
      writeFileSync(
        join(home, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['check.ts'] }),
      );
      const r = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], home, 3 * MINUTES);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    },
    4 * MINUTES,
  );

  it(
    'migrate generate, serve from the installed copy, and sign-up, writes, lists, the dashboard and gen client work',
    async () => {
      const bin = join(home, 'node_modules/.bin/tablebase');
      const migration = await run(bin, ['migrate', 'generate', '--project', 'app', '--name', 'init'], home, 2 * MINUTES);
      expect(migration.code, migration.stdout + migration.stderr).toBe(0);
      const port = await freePort();
      server = spawn(bin, ['serve', '--project', 'app', '--host', '127.0.0.1', '--port', String(port)], { cwd: home, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      server.stdout!.on('data', (d) => (serverOutput += d));
      server.stderr!.on('data', (d) => (serverOutput += d));
      const base = `http://127.0.0.1:${port}`;
      let up = false;
      for (let i = 0; i < 600 && !up && server.exitCode === null; i++) {
        up = await fetch(`${base}/health`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (!up) await new Promise((r) => setTimeout(r, 100));
      }
      expect(up, serverOutput).toBe(true);
      // The installed copy runs compiled JavaScript: no TypeScript loader in the process.
      expect(serverOutput).not.toContain('tsx');

      const post = async (path: string, body: unknown, token?: string) => {
        const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
        return { status: r.status, json: (await r.json()) as { data: Record<string, unknown> } };
      };
      const signUp = await post('/auth/sign-up', { type: 'signUp', table: 'users', email: 'ada@example.com', password: 'correct horse battery staple' });
      expect(signUp.status, JSON.stringify(signUp.json)).toBe(200);
      const token = signUp.json.data.accessToken as string;
      const created = await post('/db', { table: 'notes', object: { text: 'from the tarball' } }, token);
      expect(created.status, JSON.stringify(created.json)).toBe(200);
      const list = await fetch(`${base}/db/list?body=${encodeURIComponent(JSON.stringify({ table: 'notes' }))}`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await list.json()) as { data: { items: { text: string }[] } }).data.items.map((n) => n.text)).toEqual(['from the tarball']);

      const page = await fetch(`${base}/_`);
      expect(page.status).toBe(200);
      const script = /src="(\/_\/assets\/app\.js[^"]*)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      expect((await fetch(base + script!)).status).toBe(200);

      const status = await run(bin, ['migrate', 'status', '--project', 'app'], home, 2 * MINUTES);
      expect(status.code, status.stdout + status.stderr).toBe(0);
      const openapi = await run(bin, ['openapi', '--project', 'app'], home, 2 * MINUTES);
      expect(openapi.code, openapi.stderr).toBe(0);
      expect((JSON.parse(openapi.stdout) as { paths: Record<string, unknown> }).paths['/db']).toBeDefined();
      const gen = await run(bin, ['gen', 'client', '--project', 'app'], home, 2 * MINUTES);
      expect(gen.code, gen.stdout + gen.stderr).toBe(0);
      expect(readFileSync(join(home, 'app/tablebase-client.ts'), 'utf8')).toContain('export function createClient');
    },
    5 * MINUTES,
  );
});
