/**
 * `npm run bench`: Tablebase against a raw node:http + better-sqlite3 server doing the same SQL,
 * measured in the same run so the shared machine's noise cancels out in the ratios (issue #2
 * targets at c=50: list ≥ 70%, get ≥ 50%, create ≥ 60%).
 *
 * Each scenario runs BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS (default 5), the servers
 * in a rotated order each round; a ratio is the median of the per-round ratios. Two ratios are
 * printed: req/s (what a client sees, noisy on a shared 2-core machine where autocannon takes a
 * core) and CPU per request of the server process (steady: a neighbour taking a core for a while
 * does not move it). `BENCH_BEFORE=<another checkout>` adds that checkout's Tablebase as a third
 * server, so a change is measured against its parent in one run (issue #10: "within 5% of before").
 * Then the `serve --workers` measurements of bench/workers.ts (BENCH_WORKERS=off skips them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, load, median, rawServerArgs, startProcess, type Started } from './lib.js';
import { runWorkersBench } from './workers.js';

const SEED = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const BEFORE = process.env.BENCH_BEFORE;
const data = mkdtempSync(join(tmpdir(), 'tb-bench-'));

interface Server {
  name: string;
  started: Started;
  ids: string[];
}

const tablebase = (dir: string, cwd?: string) =>
  startProcess(['bin/tablebase.mjs', '__run-dev', '--project', 'examples/bench', '--data', join(data, dir), '--host', '127.0.0.1', '--port', '{port}'], {}, cwd);

async function seed(s: Started, raw: boolean): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SEED; i += 1000) {
    const objects = Array.from({ length: 1000 }, (_, j) => ({ title: `item ${i + j}`, n: i + j }));
    if (raw) {
      for (const o of objects) {
        const r = await fetch(`${s.base}/db`, { method: 'POST', body: JSON.stringify({ table: 'items', object: o }) });
        ids.push(((await r.json()) as { data: { id: string } }).data.id);
      }
    } else {
      const r = await fetch(`${s.base}/db/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', objects }) });
      ids.push(...((await r.json()) as { data: { id: string }[] }).data.map((x) => x.id));
    }
  }
  return ids;
}

const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));
type Opts = Parameters<typeof load>[0];
const scenarios: { name: string; opts: (s: Server) => Opts }[] = [
  { name: 'list limit 50 + total', opts: (s) => ({ url: `${s.started.base}/db/list?body=${q({ table: 'items', limit: 50 })}` }) },
  {
    name: 'get by id',
    opts: (s) => ({
      url: s.started.base,
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/db?body=${q({ table: 'items', where: { id: { eq: s.ids[Math.floor(Math.random() * s.ids.length)] } } })}` }) }],
    }),
  },
  {
    name: 'create',
    opts: (s) => ({ url: `${s.started.base}/db`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table: 'items', object: { title: 'bench', n: 1 } }) }),
  },
];

interface Sample {
  rps: number;
  p99: number;
  cpuUs: number;
  bad: number;
}

async function measure(s: Server, opts: Opts): Promise<Sample> {
  const pid = s.started.proc.pid;
  const before = cpuSeconds(pid);
  const l = await load({ ...opts, duration: SECONDS });
  return { rps: l.rps, p99: l.p99, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / Math.max(1, l.total), bad: l.non2xx };
}

const pct = (x: number) => (Number.isFinite(x) ? `**${(x * 100).toFixed(0)}%**` : 'n/a');
const servers: Server[] = [];
try {
  const base = await startProcess(rawServerArgs(join(data, 'raw.sqlite'), '{port}'));
  servers.push({ name: 'baseline', started: base, ids: await seed(base, true) });
  const ours = await tablebase('tb');
  servers.push({ name: 'tablebase', started: ours, ids: await seed(ours, false) });
  if (BEFORE) {
    const before = await tablebase('before', BEFORE);
    servers.push({ name: 'before', started: before, ids: await seed(before, false) });
  }
  const head = ['scenario', 'baseline req/s', 'tablebase req/s', 'tablebase p99 ms', 'req/s ratio', 'baseline µs CPU/req', 'tablebase µs CPU/req', 'CPU ratio'];
  if (BEFORE) head.push('before req/s ratio', 'before CPU ratio');
  head.push('tablebase non-2xx');
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  console.log(`${ROUNDS} rounds of ${SECONDS} s per server and scenario; ratios are medians of per-round ratios (CPU ratio: baseline CPU per request / ours)\n`);
  console.log(lines.join('\n'));
  for (const c of [10, 50]) {
    for (const sc of scenarios) {
      const samples = new Map<string, Sample[]>(servers.map((s) => [s.name, []]));
      for (let r = 0; r < ROUNDS; r++) {
        // Rotate the order each round, so no server always runs first on a cooler machine.
        for (let i = 0; i < servers.length; i++) {
          const s = servers[(i + r) % servers.length]!;
          samples.get(s.name)!.push(await measure(s, { ...sc.opts(s), connections: c }));
        }
      }
      const b = samples.get('baseline')!;
      const ratios = (name: string) => {
        const o = samples.get(name)!;
        return [median(o.map((x, i) => x.rps / b[i]!.rps)), median(o.map((x, i) => b[i]!.cpuUs / x.cpuUs))];
      };
      const o = samples.get('tablebase')!;
      const [rps, cpu] = ratios('tablebase');
      const cells = [
        `${sc.name} c=${c}`,
        median(b.map((x) => x.rps)).toFixed(0),
        median(o.map((x) => x.rps)).toFixed(0),
        median(o.map((x) => x.p99)),
        pct(rps!),
        median(b.map((x) => x.cpuUs)).toFixed(1),
        median(o.map((x) => x.cpuUs)).toFixed(1),
        pct(cpu!),
      ];
      if (BEFORE) cells.push(...ratios('before').map(pct));
      cells.push(String(o.reduce((n, x) => n + x.bad, 0)));
      lines.push(`| ${cells.join(' | ')} |`);
      console.log(lines.at(-1));
    }
  }
  console.log(`\n${lines.join('\n')}`);
} finally {
  for (const s of servers) s.started.stop();
  rmSync(data, { recursive: true, force: true });
}

// serve --workers: 2 workers against 1 against the raw server under wrk, cross-worker live
// delivery, and what a remote change costs a node with many live queries (bench/workers.ts).
if (process.env.BENCH_WORKERS !== 'off') await runWorkersBench();
