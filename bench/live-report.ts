/** Percentiles and the printed report of the live benchmark (bench/live.ts). */
import { cpus } from 'node:os';
import type { Load } from './lib.js';
import type { OpenResult, ProbeResult } from './live-client.js';

/** Nearest-rank percentile; NaN for no samples. */
export function pct(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface ThroughputRun extends Load {
  /** Streams open during the run. */
  streams: number;
  /** Server CPU time (user + system) per create, µs. */
  cpuUsPerReq: number;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Mean create rate with streams open over the mean without. */
export function throughputRatio(runs: readonly ThroughputRun[]): number {
  return mean(runs.filter((r) => r.streams > 0).map((r) => r.rps)) / mean(runs.filter((r) => r.streams === 0).map((r) => r.rps));
}

export interface Target {
  name: string;
  value: number;
  unit: string;
  limit: string;
  pass: boolean;
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

function probeRow(name: string, p: ProbeResult): string {
  const s = p.fromSend;
  const a = p.fromAnswer;
  const early = a.filter((x) => x < 0).length;
  return `| ${name} | ${s.length} | ${f1(pct(s, 50))} | ${f1(pct(s, 95))} | ${f1(pct(s, 99))} | ${f1(pct(s, 100))} | ${f1(pct(a, 50))} | ${f1(pct(a, 99))} | ${f1(pct(p.writeMs, 50))} | ${early} | ${p.missed} | ${p.wrong} |`;
}

export interface Report {
  targets: Target[];
  probes: { a: ProbeResult; d: ProbeResult; e: ProbeResult };
  /** Create-throughput runs in the order measured. */
  runs: ThroughputRun[];
  memory: Record<string, { rss: number; peak: number }>;
  server: { m1: number; m2: number; m3: number; releaseMs: number; openAfterClose: number; closed: number };
  clientHealth: Record<string, { open: number; closedByServer: number }>;
  opens: Record<string, OpenResult>;
  /** os.loadavg() around the measurements: the machine is shared, this says how busy it was. */
  loadavg: { before: number[]; after: number[] };
}

export function report(r: Report): void {
  const out: string[] = [];
  out.push('', '## Live-query benchmark', '');
  out.push('| target | measured | limit | result |', '|---|---|---|---|');
  for (const t of r.targets) out.push(`| ${t.name} | **${f1(t.value)} ${t.unit}** | ${t.limit} ${t.unit} | ${t.pass ? 'PASS' : 'FAIL'} |`);
  out.push('', 'Payload latency, ms (from send: the write request leaving the client; from answer: its response arriving; early: payloads that beat the answer):', '');
  out.push('| probe | samples | p50 | p95 | p99 | max | p50 from answer | p99 from answer | write p50 | early | missed | wrong |', '|---|---|---|---|---|---|---|---|---|---|---|---|');
  const o = r.opens;
  out.push(
    probeRow(`(a) 1 of ${o.distinct!.opened} distinct queries`, r.probes.a),
    probeRow(`(d) all ${o.fanout!.opened} distinct queries`, r.probes.d),
    probeRow(`(e) ${o.shared!.opened} streams of 1 shared query`, r.probes.e),
  );
  const base = mean(r.runs.filter((x) => x.streams === 0).map((x) => x.rps));
  const baseCpu = mean(r.runs.filter((x) => x.streams === 0).map((x) => x.cpuUsPerReq));
  out.push('', 'Create throughput (autocannon, 10 connections), in the order measured:', '');
  out.push('| streams open | req/s | p99 ms | non-2xx | vs mean without streams | server CPU µs per create |', '|---|---|---|---|---|---|');
  for (const x of r.runs) out.push(`| ${x.streams} | ${x.rps.toFixed(0)} | ${x.p99} | ${x.non2xx} | ${((x.rps / base) * 100).toFixed(0)}% | ${x.cpuUsPerReq.toFixed(0)} |`);
  const withCpu = mean(r.runs.filter((x) => x.streams > 0).map((x) => x.cpuUsPerReq));
  // Each run with streams against the mean of the runs just before and after it.
  const pairs = r.runs.flatMap((x, i) => (x.streams > 0 && r.runs[i - 1] && r.runs[i + 1] ? [x.rps / mean([r.runs[i - 1]!.rps, r.runs[i + 1]!.rps])] : []));
  out.push(
    '',
    `Throughput with / without: ${(throughputRatio(r.runs) * 100).toFixed(0)}% (means); each run against its neighbours: ${pairs.map((p) => `${(p * 100).toFixed(0)}%`).join(', ')}. ` +
      `Server CPU per create with / without: ${((withCpu / baseCpu) * 100).toFixed(0)}% (${withCpu.toFixed(0)} vs ${baseCpu.toFixed(0)} µs).`,
  );
  out.push('', 'Server memory (kernel VmRSS / VmHWM, MB):', '');
  for (const [k, v] of Object.entries(r.memory)) out.push(`- ${k}: RSS ${v.rss.toFixed(0)}, peak ${v.peak.toFixed(0)}`);
  const s = r.server;
  out.push('', `Server-side open streams (/dashboard/metrics): after opening ${s.m1}, after the load run ${s.m2}, at the peak ${s.m3}.`);
  out.push(`Closed ${s.closed} streams from the client: the server reported ${s.openAfterClose} open after ${s.releaseMs.toFixed(0)} ms.`);
  out.push(`Client view before closing: ${JSON.stringify(r.clientHealth)}`);
  out.push(
    `Opening: ${Object.entries(r.opens)
      .map(([g, o]) => `${g} ${o.opened} in ${(o.ms / 1000).toFixed(1)} s (refused ${o.refused}, failed ${o.failed})`)
      .join('; ')}`,
  );
  const la = (x: number[]) => x.map((v) => v.toFixed(2)).join(' / ');
  out.push(`Machine load average (1 / 5 / 15 min) on ${cpus().length} cores: ${la(r.loadavg.before)} before, ${la(r.loadavg.after)} after.`);
  const failed = r.targets.filter((t) => !t.pass).length;
  out.push('', failed === 0 ? 'All targets met.' : `${failed} target(s) missed.`);
  console.log(out.join('\n'));
}
