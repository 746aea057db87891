/**
 * `node --import tsx bench/limiter.ts`: what rate limiting (docs/reference/rate-limits.md, pipeline step 1) costs on
 * `get` at c=50. One server (bench/projects/limiter) with two identical tables, `plain` (policy
 * `null`) and `limited` (the default policy, raised to a million per 10 s so nothing is refused):
 * the difference between them is the limiter. Runs come in back-to-back pairs (alternating which
 * goes first). Two measures of cost, each the median over the pairs: lost throughput, and extra
 * server CPU time per request (from /proc/<pid>/stat, all threads) — the second is far less
 * disturbed by whatever else the shared machine is running. Target: < 10% cost.
 *
 * Two client mixes: one client (one sliding log that grows to every request in the window), and
 * 10,000 clients behind a trusted proxy (X-Forwarded-For; one key each, so map lookups and the
 * sweep matter) — both tables see the same headers, so header parsing cancels out.
 *
 * Last, the limiter alone in-process (`enforce` per request, same project, same key mixes): the
 * intrinsic cost, to set beside the server's CPU time per request.
 *
 * Env: BENCH_SECONDS (default 3 per run), BENCH_REPEATS (default 7). Loopback only; stops itself.
 */
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileProject } from '../src/core/model.js';
import { createPolicyResolver, createRateLimiter, MemoryRateLimitStore } from '../src/ratelimit/index.js';
import { startProcess } from './lib.js';
import project from './projects/limiter/tablebase.config.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 7);
const CONNECTIONS = 50;
const ROWS = 1000;
const CLIENTS = 10_000;

interface Run {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  /** Server CPU microseconds (user + system) per answered request; NaN where /proc is missing. */
  cpuUs: number;
}

/** The server's CPU time so far in ms (utime + stime, clock ticks of 10 ms), or NaN off Linux. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

const data = mkdtempSync(join(tmpdir(), 'tb-bench-limiter-'));
const server = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'bench/projects/limiter', '--data', join(data, 'tb'), '--host', '127.0.0.1', '--port', '{port}']);

async function seed(table: string): Promise<string[]> {
  const objects = Array.from({ length: ROWS }, (_, i) => ({ title: `row ${i}`, n: i }));
  const r = await fetch(`${server.base}/db/many`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ table, objects }) });
  if (r.status !== 200) throw new Error(`seeding ${table}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { data: { id: string }[] }).data.map((x) => x.id);
}

const q = (o: unknown) => encodeURIComponent(JSON.stringify(o));

async function measure(table: string, ids: string[], manyClients: boolean): Promise<Run> {
  // Paths are built ahead of time so the client's own work is the same for both tables.
  const paths = ids.map((id) => `/db?body=${q({ table, where: { id: { eq: id } } })}`);
  let i = 0;
  const cpuBefore = cpuMs(server.proc.pid!);
  const result = await autocannon({
    url: server.base,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        setupRequest: (req) => {
          const n = i++;
          const c = n % CLIENTS;
          const headers = manyClients ? { ...req.headers, 'x-forwarded-for': `10.0.${c >> 8}.${c & 255}` } : req.headers;
          return { ...req, path: paths[n % paths.length], headers };
        },
      },
    ],
  });
  const cpuUs = ((cpuMs(server.proc.pid!) - cpuBefore) * 1000) / result.requests.total;
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts, cpuUs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Microseconds per `enforce` call on `table`, median of 5 rounds of 100,000 calls (under the policy: nothing refused). */
function inProcess(table: string, clients: number): number {
  const model = compileProject(project, []);
  const limiter = createRateLimiter({ resolver: createPolicyResolver(model, project.server?.defaultPolicy), store: new MemoryRateLimitStore() });
  const ips = Array.from({ length: clients }, (_, c) => `10.0.${c >> 8}.${c & 255}`);
  const N = 100_000;
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    for (let k = 0; k < N; k++) limiter.enforce(ips[k % clients]!, table, 'get');
    rounds.push(((performance.now() - t0) * 1000) / N);
  }
  return median(rounds);
}

try {
  const ids = { plain: await seed('plain'), limited: await seed('limited') };
  // Warm both routes (JIT, SQLite page cache) before anything is recorded.
  await measure('plain', ids.plain, false);
  await measure('limited', ids.limited, false);

  const lines: string[] = [];
  for (const manyClients of [false, true]) {
    const runs: Record<'plain' | 'limited', Run[]> = { plain: [], limited: [] };
    for (let rep = 0; rep < REPEATS; rep++) {
      const order: ('plain' | 'limited')[] = rep % 2 === 0 ? ['plain', 'limited'] : ['limited', 'plain'];
      for (const table of order) {
        const run = await measure(table, ids[table], manyClients);
        runs[table].push(run);
        console.log(
          `${manyClients ? `${CLIENTS} clients` : '1 client'} ${table} #${rep + 1}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${run.cpuUs.toFixed(1)} µs CPU/request, non-2xx ${run.bad}`,
        );
      }
    }
    const plain = median(runs.plain.map((r) => r.rps));
    const limited = median(runs.limited.map((r) => r.rps));
    const lost = ((1 - median(runs.limited.map((r, k) => r.rps / runs.plain[k]!.rps))) * 100).toFixed(1);
    const cpu = ((median(runs.limited.map((r, k) => r.cpuUs / runs.plain[k]!.cpuUs)) - 1) * 100).toFixed(1);
    const bad = [...runs.plain, ...runs.limited].reduce((n, r) => n + r.bad, 0);
    const us = (rs: Run[]) => median(rs.map((r) => r.cpuUs)).toFixed(1);
    lines.push(
      `| get c=${CONNECTIONS}, ${manyClients ? `${CLIENTS} clients via X-Forwarded-For` : '1 client'} | ${plain.toFixed(0)} | ${median(runs.plain.map((r) => r.p99))} | ${us(runs.plain)} | ${limited.toFixed(0)} | ${median(runs.limited.map((r) => r.p99))} | ${us(runs.limited)} | ${lost}% | **${cpu}%** | ${bad} |`,
    );
  }
  console.log(`\nmedians of ${REPEATS} runs of ${SECONDS} s each; costs are medians over back-to-back pairs\n`);
  console.log(
    '| scenario | null policy req/s | p99 ms | CPU µs/req | default policy req/s | p99 ms | CPU µs/req | throughput lost | CPU per request added | non-2xx |\n|---|---|---|---|---|---|---|---|---|---|',
  );
  console.log(lines.join('\n'));

  console.log('\nin-process, `limiter.enforce` per request (median of 5 × 100,000 calls)\n');
  console.log('| clients | null policy µs | default policy µs |\n|---|---|---|');
  for (const clients of [1, CLIENTS]) console.log(`| ${clients} | ${inProcess('plain', clients).toFixed(3)} | ${inProcess('limited', clients).toFixed(3)} |`);
} finally {
  server.stop();
  rmSync(data, { recursive: true, force: true });
}
