/**
 * `node --import tsx bench/writes.ts`: single-row creates under many concurrent clients (docs/reference/rules-and-hooks.md).
 * Tablebase (examples/bench, default `maxPendingWrites` 64) beside the raw node:http +
 * better-sqlite3 baseline (bench/raw-server.ts), at c=100 and c=200. Reports throughput, p50/p99
 * latency and every answer that was not a 200 — 503 WRITE_QUEUE_FULL counted on its own.
 * Target: no rejection at c=200 with the default cap.
 *
 * Env: BENCH_SECONDS (default 8 per run). Loopback only; stops itself.
 */
import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawServerArgs, startProcess, type Started } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);

interface Run {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  rejected: number;
  otherNon2xx: number;
  errors: number;
}

async function creates(server: Started, connections: number, duration = SECONDS): Promise<Run> {
  const r = await autocannon({
    url: `${server.base}/db`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ table: 'items', object: { title: 'bench write', n: 1 } }),
    connections,
    duration,
  });
  const codes = r.statusCodeStats as unknown as Record<string, { count: number } | undefined>;
  const ok = codes['200']?.count ?? 0;
  const rejected = codes['503']?.count ?? 0;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, ok, rejected, otherNon2xx: r.non2xx - rejected, errors: r.errors + r.timeouts };
}

const data = mkdtempSync(join(tmpdir(), 'tb-bench-writes-'));
const ours = await startProcess(['bin/tablebase.mjs', 'serve', '--project', 'examples/bench', '--data', join(data, 'tb'), '--host', '127.0.0.1', '--port', '{port}']);
const base = await startProcess(rawServerArgs(join(data, 'raw.sqlite'), '{port}'));

try {
  // Warm both (JIT, WAL file growth) so the first measured run is not the cold one.
  await creates(base, 10, 2);
  await creates(ours, 10, 2);
  const lines: string[] = [];
  for (const [i, c] of [100, 200].entries()) {
    // Alternate which server goes first, so neither always runs on a warmer machine.
    const order = i % 2 === 0 ? (['base', 'ours'] as const) : (['ours', 'base'] as const);
    const runs: Partial<Record<'base' | 'ours', Run>> = {};
    for (const who of order) {
      runs[who] = await creates(who === 'ours' ? ours : base, c);
      const run = runs[who]!;
      console.log(
        `c=${c} ${who === 'ours' ? 'tablebase' : 'baseline'}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, 200s ${run.ok}, 503s ${run.rejected}, other non-2xx ${run.otherNon2xx}, errors ${run.errors}`,
      );
    }
    const b = runs.base!;
    const o = runs.ours!;
    lines.push(
      `| create c=${c} | ${b.rps.toFixed(0)} | ${b.p99} | ${o.rps.toFixed(0)} | ${o.p50} | ${o.p99} | **${((o.rps / b.rps) * 100).toFixed(0)}%** | ${o.ok} | **${o.rejected}** | ${o.otherNon2xx + o.errors} |`,
    );
  }
  console.log(`\n${SECONDS} s per run, maxPendingWrites 64 (default)\n`);
  console.log('| scenario | baseline req/s | baseline p99 ms | tablebase req/s | p50 ms | p99 ms | ratio | 200s | 503 WRITE_QUEUE_FULL | other failures |\n|---|---|---|---|---|---|---|---|---|---|');
  console.log(lines.join('\n'));
} finally {
  ours.stop();
  base.stop();
  rmSync(data, { recursive: true, force: true });
}
