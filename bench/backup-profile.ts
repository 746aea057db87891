/**
 * Where continuous backup's cost goes (issue #21, docs/reference/backups.md): one server on a fresh
 * data folder under the create load of bench/backup.ts, with a folder destination (NOBACKUP=1:
 * without), printing req/s and the server's CPU per create; with PROF=<dir> every process and
 * thread of the server writes a V8 CPU profile there on exit (open it in Chrome DevTools).
 *
 *   PROF=/tmp/prof flock /tmp/bench.lock node --import tsx bench/backup-profile.ts   (SECS per load, default 8; RATE=n req/s)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { load, ROOT, freePort, waitHealthy, cpuSeconds } from './lib.js';
const PROJECT = join(ROOT, 'examples/conformance');
const BIN = join(ROOT, 'bin/tablebase.mjs');
const env = { ...process.env, JWT_SECRET: 'b'.repeat(64), PASSWORD_SECRET: 'c'.repeat(64), LOG_LEVEL: 'error' };
const work = mkdtempSync(join(tmpdir(), 'tb-prof-'));
const data = join(work, 'data');
/** DEST=<folder>: the destination elsewhere (e.g. on tmpfs, to take the disk out of the comparison). */
const destDir = process.env.DEST ? mkdtempSync(join(process.env.DEST, 'tb-prof-dest-')) : join(work, 'dest');
const backup = process.env.NOBACKUP ? [] : ['--backup', pathToFileURL(destDir).href];
execFileSync(process.execPath, [BIN, 'admin', 'create', '--project', PROJECT, '--data', data, '--email', 'a@example.com', '--password', 'bench-password-1'], { env, stdio: 'ignore' });
const port = await freePort();
const prof = process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : [];
const proc = spawn(
  process.execPath,
  [...prof, BIN, 'serve', '--project', PROJECT, '--data', data, '--host', '127.0.0.1', '--port', String(port), ...backup, ...(process.env.WORKERS ? ['--workers', process.env.WORKERS] : [])],
  {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
const base = `http://127.0.0.1:${port}`;
await waitHealthy(base, proc, () => '');
const body = JSON.stringify({ table: 'big', object: { payload: 'a row written during the benchmark' } });
// RATE=n: a fixed offered load (requests/s) instead of as many as the server takes, so the CPU per
// create compares like with like on a busy machine (group commit batches depend on the rate).
const rate = process.env.RATE ? { overallRate: Number(process.env.RATE) } : {};
const opts = { url: `${base}/db`, method: 'POST' as const, connections: Number(process.env.CONNS ?? 8), headers: { 'content-type': 'application/json' }, body, ...rate };
const warm = await load({ ...opts, duration: 3 });
const c0 = cpuSeconds(proc.pid);
const t0 = threadCpu(proc.pid!);
const r = await load({ ...opts, duration: Number(process.env.SECS ?? 8) });
const t1 = threadCpu(proc.pid!);
// µs per create of each thread that used more than 2 (in creation order: the main thread first,
// then V8's helpers, the libuv pool, and worker threads such as the backup's, each `name#tid`).
const kinds = [...t1]
  .map(([tid, { name, cpu }]) => [`${name}#${tid}`, ((cpu - (t0.get(tid)?.cpu ?? 0)) * 1e6) / r.total] as const)
  .filter(([, v]) => v > 2)
  .map(([k, v]) => `${k} ${v.toFixed(0)}`);
// WAL bytes per create (shipped segments over every create of both loads): what shipping's reads,
// hashes and destination writes scale with; small group-commit batches write whole pages per commit.
if (!process.env.NOBACKUP) await new Promise((res) => setTimeout(res, 2500)); // the last sync
const shipped = process.env.NOBACKUP ? '' : ` WAL KB shipped/create ${(walBytes(destDir) / 1024 / (warm.total + r.total)).toFixed(1)}`;
console.log(`rps ${r.rps.toFixed(0)} cpu µs/create ${(((cpuSeconds(proc.pid) - c0) * 1e6) / r.total).toFixed(0)} (${kinds.join(', ')}) non2xx ${r.non2xx}${shipped}`);
proc.kill('SIGTERM');

/** Bytes of the `.wal` segment objects under a folder destination. */
function walBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) if (e.isFile() && e.name.endsWith('.wal')) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

/** CPU seconds per thread of `pid`, with the thread's name (/proc/<pid>/task/<tid>/comm). */
function threadCpu(pid: number): Map<string, { name: string; cpu: number }> {
  const out = new Map<string, { name: string; cpu: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name =
        tid === String(pid)
          ? 'main'
          : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
              .trim()
              .replace(/[0-9]+$/, '');
      out.set(tid, { name, cpu: cpuSeconds(pid, Number(tid)) });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}
await new Promise((res) => proc.once('exit', res));
rmSync(work, { recursive: true, force: true });
rmSync(destDir, { recursive: true, force: true });
