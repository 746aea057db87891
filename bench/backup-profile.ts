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
const w0 = workersCpu(proc.pid!);
const m0 = machineCpu();
const r = await load({ ...opts, duration: Number(process.env.SECS ?? 8) });
const m1 = machineCpu();
const w1 = workersCpu(proc.pid!);
const t1 = threadCpu(proc.pid!);
// µs per create of each thread that used more than 2 (in creation order: the main thread first,
// then V8's helpers, the libuv pool, and worker threads such as the backup's, each `name#tid`).
// After each, the thread's page faults per create (`pf`): on this VM a fault costs microseconds.
const perThread = [...t1].map(([tid, { name, cpu, faults }]) => [`${name}#${tid}`, ((cpu - (t0.get(tid)?.cpu ?? 0)) * 1e6) / r.total, (faults - (t0.get(tid)?.faults ?? 0)) / r.total] as const);
const kinds = perThread.filter(([, v]) => v > 2).map(([k, v, f]) => `${k} ${v.toFixed(0)} pf ${f.toFixed(2)}`);
// Every thread but the main one and the backup's worker (taken to be the busiest other thread):
// V8's GC and compiler threads, the libuv pool.
const others = perThread.slice(1).map(([, v]) => v);
const helpers = others.reduce((n, v) => n + v, 0) - (process.env.NOBACKUP ? 0 : Math.max(0, ...others));
kinds.push(`helpers ${helpers.toFixed(0)}`);
// WAL bytes per create (shipped segments over every create of both loads): what shipping's reads,
// hashes and destination writes scale with; small group-commit batches write whole pages per commit.
if (!process.env.NOBACKUP) await new Promise((res) => setTimeout(res, 2500)); // the last sync
const shipped = process.env.NOBACKUP
  ? ''
  : ` WAL KB shipped/create ${(walBytes(destDir) / 1024 / (warm.total + r.total)).toFixed(1)} creates/commit ${((warm.total + r.total) / commits(destDir)).toFixed(1)}`;
// The workers (HTTP processes forwarding creates) and the whole machine (the load generator, the
// kernel's writeback threads, anyone else's work) per create: what the throughput ratio feels.
const per = (s: number) => ((s * 1e6) / r.total).toFixed(0);
console.log(
  `rps ${r.rps.toFixed(0)} p99/p99.9/max ms ${r.p99}/${r.p999}/${r.max} cpu µs/create ${per(cpuSeconds(proc.pid) - c0)} (${kinds.join(', ')}) workers ${per(w1 - w0)} machine ${per(m1.busy - m0.busy)} (system ${per(m1.system - m0.system)}) non2xx ${r.non2xx}${shipped}`,
);
proc.kill('SIGTERM');

/** Bytes of the `.wal` segment objects under a folder destination. */
function walBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) if (e.isFile() && e.name.endsWith('.wal')) n += statSync(join(e.parentPath, e.name)).size;
  return n;
}

/** Transactions shipped: the commits listed by every segment manifest under a folder destination. */
function commits(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile() && e.name.endsWith('.json') && e.parentPath.includes('/wal/')) n += (JSON.parse(readFileSync(join(e.parentPath, e.name), 'utf8')) as { commits: unknown[] }).commits.length;
  return Math.max(1, n);
}

/** CPU seconds of the primary's child processes (the HTTP workers). */
function workersCpu(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const c of children.split(' ').filter(Boolean)) n += cpuSeconds(Number(c));
  }
  return n;
}

/** The whole machine's busy CPU seconds (every core; idle and iowait excluded), and the kernel's share. */
function machineCpu(): { busy: number; system: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  return { busy: (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) / 100, system: (f[2]! + f[5]! + f[6]!) / 100 };
}

/** CPU seconds and minor page faults per thread of `pid`, with the thread's name (/proc/<pid>/task/<tid>/comm). */
function threadCpu(pid: number): Map<string, { name: string; cpu: number; faults: number }> {
  const out = new Map<string, { name: string; cpu: number; faults: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name =
        tid === String(pid)
          ? 'main'
          : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8')
              .trim()
              .replace(/[0-9]+$/, '');
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const minflt = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]); // field 10, minor faults
      out.set(tid, { name, cpu: cpuSeconds(pid, Number(tid)), faults: minflt });
    } catch {
      /* the thread ended */
    }
  }
  return out;
}
await new Promise((res) => proc.once('exit', res));
rmSync(work, { recursive: true, force: true });
rmSync(destDir, { recursive: true, force: true });
