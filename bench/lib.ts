/** Shared benchmark plumbing: start servers, run autocannon, print ratio tables. */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

/** The raw node:http + better-sqlite3 baseline (bench/raw-server.ts) on `file`, as `node` arguments. */
export const rawServerArgs = (file: string, port: string): string[] => ['--import', 'tsx', 'bench/raw-server.ts', file, port];

export function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

export async function waitHealthy(base: string, proc: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) break;
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start: ${log()}`);
}

export interface Started {
  base: string;
  proc: ChildProcess;
  stop(): void;
}

export async function startProcess(args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<Started> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    args.map((a) => a.replace('{port}', String(port))),
    {
      cwd,
      // LOG_LEVEL=warn: no request log lines (BENCH_LOG_LEVEL=info measures them, the servers' default).
      env: { ...process.env, JWT_SECRET: randomBytes(32).toString('hex'), PASSWORD_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, proc, () => out);
  // Kept only for a start that fails: with request log lines on, the output is read and dropped.
  out = '';
  proc.stdout!.removeAllListeners('data').on('data', () => undefined);
  proc.stderr!.removeAllListeners('data').on('data', () => undefined);
  return { base, proc, stop: () => proc.kill('SIGKILL') };
}

/**
 * CPU seconds (user + system) a process (all its threads), or one of its threads, has used, from
 * /proc on Linux; NaN elsewhere. CPU per request is steadier than req/s on a shared machine: it
 * does not move when another process takes a core for a while.
 */
export function cpuSeconds(pid: number | undefined, thread?: number): number {
  try {
    return statCpuSeconds(readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8'));
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds in a /proc/<pid>/stat line: the process's own (fields 14 utime, 15 stime), or with
 * `children` those of its children it has waited for (16 cutime, 17 cstime); clock ticks, USER_HZ = 100.
 */
export function statCpuSeconds(stat: string, children = false): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
  const at = children ? 13 : 11;
  return (Number(f[at]) + Number(f[at + 1])) / 100;
}

/** The p-th percentile (nearest rank) of `xs`. */
export function percentileOf(xs: readonly number[], p: number): number {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export interface Load {
  rps: number;
  /** p99 latency of the 2xx answers, ms to 0.01 (autocannon's own histogram keeps whole ms, too coarse where a p99 is 1–2 ms). */
  p99: number;
  /** p99.9 and the slowest 2xx answer, ms (where a stall of the event loop shows: a checkpoint, a GC). */
  p999?: number;
  max?: number;
  non2xx: number;
  /** Requests completed. */
  total: number;
}

export async function load(opts: autocannon.Options): Promise<Load> {
  // Without a callback autocannon returns its instance made thenable (its typings say only a Promise).
  const run = autocannon({ ...opts, duration: opts.duration ?? Number(process.env.BENCH_SECONDS ?? 8) }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  // Each answer's time as autocannon measured it (hrtime, fractional ms), 2xx only as its histogram.
  const times: number[] = [];
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const r = await run;
  const ms = (p: number, fallback: number) => (times.length ? Math.round(percentileOf(times, p) * 100) / 100 : fallback);
  return {
    rps: r.requests.average,
    p99: ms(99, r.latency.p99),
    p999: ms(99.9, r.latency.p99_9),
    max: ms(100, r.latency.max),
    non2xx: r.non2xx + r.errors,
    total: r.requests.total,
  };
}

export function row(name: string, base: Load, ours: Load): string {
  const ratio = ((ours.rps / base.rps) * 100).toFixed(0);
  return `| ${name} | ${base.rps.toFixed(0)} | ${base.p99} | ${ours.rps.toFixed(0)} | ${ours.p99} | **${ratio}%** | ${ours.non2xx} |`;
}

export const HEADER = '| scenario | baseline req/s | baseline p99 ms | tablebase req/s | tablebase p99 ms | ratio | tablebase non-2xx |\n|---|---|---|---|---|---|---|';
