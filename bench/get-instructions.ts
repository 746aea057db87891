/**
 * Main-thread instructions per get by id, counted by callgrind: a measure no host's speed or
 * neighbours move, beside bench/workers.ts's CPU per request (which does move: a get cost one
 * worker 1.31× the raw server's CPU on one host and 1.62× on another, for the same code).
 *
 *   flock /tmp/bench.lock node --import tsx bench/get-instructions.ts <raw|w1|w2>   (needs valgrind)
 *
 * The server (the raw node:http + better-sqlite3 one, or `serve --workers 1` from dist/, built
 * first with `npm run build`) runs under `valgrind --tool=callgrind --separate-threads=yes`; 200
 * rows are created, 3,000 gets (10 connections) warm it up, the counters are zeroed, and the next
 * 2,000 gets are counted; the main thread's total is divided by 2,000 (docs/lifecycle.md). Fewer
 * gave higher, less steady counts (1,500 then 300: 192–196k for one worker; 3,000 then 2,000:
 * 151–155k): V8 was still compiling the hot paths, and a garbage collection more or less weighs
 * on a short window. Runs of the same code still differ by up to ~12% (raw: 126–144k): compare
 * several.
 *
 * With BENCH_FUNCTIONS=<n> it also prints the main thread's n costliest functions by self
 * instructions per get, JIT-compiled JavaScript named from node's perf map (`--perf-basic-prof`,
 * which callgrind cannot read itself): what a change to the hot path moved, function by function.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, rawServerArgs, ROOT } from './lib.js';

const mode = process.argv[2];
if (mode !== 'raw' && mode !== 'w1' && mode !== 'w2') throw new Error('usage: get-instructions.ts <raw|w1|w2>');
// w2: as many per worker as one worker gets (a shorter warm-up leaves V8 compiling in the count).
const WARM = mode === 'w2' ? 6000 : 3000;
const COUNTED = mode === 'w2' ? 4000 : 2000;
const FUNCTIONS = Number(process.env.BENCH_FUNCTIONS ?? 0);
const data = mkdtempSync(join(tmpdir(), 'tb-callgrind-'));
const port = await freePort();
const server =
  mode === 'raw'
    ? rawServerArgs(join(data, 'raw.sqlite'), String(port))
    : ['bin/tablebase.mjs', 'serve', '--project', 'examples/bench', '--data', data, '--host', '127.0.0.1', '--port', String(port), '--workers', mode === 'w2' ? '2' : '1'];
// w2: the workers are node processes the primary forks; callgrind follows them into their exec.
const children = mode === 'w2' ? ['--trace-children=yes'] : [];
const perfMap = FUNCTIONS > 0 ? ['--perf-basic-prof'] : [];
const proc = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', ...children, `--callgrind-out-file=${join(data, 'cg.%p')}`, process.execPath, ...perfMap, ...server], {
  cwd: ROOT,
  env: { ...process.env, TABLEBASE_RUN: 'dist', LOG_LEVEL: 'warn', JWT_SECRET: 'b'.repeat(64), PASSWORD_SECRET: 'c'.repeat(64) },
  stdio: 'ignore',
  // Its own process group: w2's workers are stopped with it.
  detached: true,
});
let pids: number[] = [proc.pid!];
const base = `http://127.0.0.1:${port}`;
try {
  // Under callgrind a start takes tens of seconds: wait up to two minutes for the first answer.
  for (let i = 0; ; i++) {
    try {
      await fetch(`${base}/db/list?body=${encodeURIComponent('{"table":"items","limit":1}')}`);
      break;
    } catch {
      if (i >= 240 || proc.exitCode !== null) throw new Error('the server did not start under valgrind');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: `item ${i}`, n: i } }) });
    ids.push(((await r.json()) as { data: { id: string } }).data.id);
  }
  const gets = async (n: number) => {
    let k = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (k < n) {
          const id = ids[k++ % ids.length]!;
          await (await fetch(`${base}/db?body=${encodeURIComponent(JSON.stringify({ table: 'items', where: { id: { eq: id } } }))}`)).text();
        }
      }),
    );
  };
  // w2: both workers must be up before the warm-up opens its connections (round-robin from there).
  if (mode === 'w2') await new Promise((r) => setTimeout(r, 30_000));
  await gets(WARM);
  pids = [
    proc.pid!,
    ...(mode === 'w2'
      ? execFileSync('pgrep', ['-P', String(proc.pid)], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map(Number)
      : []),
  ];
  for (const pid of pids) execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
  await gets(COUNTED);
  for (const pid of pids) execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1000));
  // The dump after zeroing is `cg.<pid>.1-<thread>`; thread 01 is each process's main thread.
  const mainOf = (pid: number) => readdirSync(data).find((f) => f === `cg.${pid}.1-01`);
  const countOf = (file: string | undefined) => (file ? Number(/^(?:summary|totals): *(\d+)/m.exec(readFileSync(join(data, file), 'utf8'))?.[1]) : NaN);
  const counts = pids.map((pid) => countOf(mainOf(pid)));
  const perGet = (n: number) => Math.round(n / COUNTED).toLocaleString('en');
  const total = counts.reduce((a, b) => a + b, 0);
  const parts = pids.length > 1 ? ` (primary ${perGet(counts[0]!)}, workers ${counts.slice(1).map(perGet).join(' + ')})` : '';
  console.log(`${mode}: ${perGet(total)} main-thread instructions per get${parts} (${COUNTED} counted after ${WARM})`);
  // The functions of the process that answered (w2: the last worker; BENCH_FUNCTIONS_OF=primary: the primary).
  const answering = process.env.BENCH_FUNCTIONS_OF === 'primary' ? pids[0]! : pids[pids.length - 1]!;
  const main = mainOf(answering);
  if (main && FUNCTIONS > 0) printFunctions(join(data, main), `/tmp/perf-${answering}.map`);
} finally {
  try {
    process.kill(-proc.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
  rmSync(data, { recursive: true, force: true });
  for (const pid of pids) {
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
    // --perf-basic-prof also leaves V8's isolate logs in the working folder.
    for (const f of readdirSync(ROOT)) if (f.startsWith('isolate-') && f.endsWith(`-${pid}-v8.log`)) rmSync(join(ROOT, f), { force: true });
  }
}

/** Self instructions per get by function; JIT code (an address to callgrind) named by the perf map. */
function printFunctions(dump: string, mapFile: string): void {
  const text = execFileSync('callgrind_annotate', ['--threshold=100', '--auto=no', '--show-percs=no', dump], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const jit: { start: number; end: number; name: string }[] = [];
  for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m) jit.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! });
  }
  jit.sort((a, b) => a.start - b.start);
  const nameOf = (addr: number): string => {
    let lo = 0;
    let hi = jit.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (jit[mid]!.end <= addr) lo = mid + 1;
      else if (jit[mid]!.start > addr) hi = mid - 1;
      else return jit[mid]!.name;
    }
    return 'JIT code (unnamed)';
  };
  const self = new Map<string, number>();
  for (const line of text.split('\n')) {
    // `1,234  file:function [object]`; the file is `???` or a path, the function may hold colons.
    const m = /^\s*([\d,]+)\s+(?:\?\?\?|\/[^:\s]*|[\w.-]+\.\w+):(.+?)\s*(?:\[[^\]]*\])?$/.exec(line);
    if (!m) continue;
    const cost = Number(m[1]!.replaceAll(',', ''));
    const fn = m[2]!;
    const addr = /^0x([0-9a-f]+)$/i.exec(fn);
    const name = addr ? nameOf(parseInt(addr[1]!, 16)) : fn;
    self.set(name, (self.get(name) ?? 0) + cost);
  }
  // The frames every instruction runs under (main, the event loop, JIT code callgrind cannot
  // split) come out of callgrind_annotate with the whole count: they name nothing.
  const total = Math.max(...self.values());
  const top = [...self]
    .filter(([, cost]) => cost < 0.9 * total)
    .sort((a, b) => b[1] - a[1])
    .slice(0, FUNCTIONS);
  for (const [name, cost] of top)
    console.log(
      `${Math.round(cost / COUNTED)
        .toLocaleString('en')
        .padStart(8)}  ${name}`,
    );
}
