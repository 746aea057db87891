/** Shared benchmark plumbing: start servers, run autocannon, print ratio tables. */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

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

export async function startProcess(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    args.map((a) => a.replace('{port}', String(port))),
    {
      cwd: ROOT,
      env: { ...process.env, JWT_SECRET: randomBytes(32).toString('hex'), PASSWORD_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, proc, () => out);
  return { base, proc, stop: () => proc.kill('SIGKILL') };
}

export interface Load {
  rps: number;
  p99: number;
  non2xx: number;
}

export async function load(opts: autocannon.Options): Promise<Load> {
  const r = await autocannon({ ...opts, duration: opts.duration ?? Number(process.env.BENCH_SECONDS ?? 8) });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

export function row(name: string, base: Load, ours: Load): string {
  const ratio = ((ours.rps / base.rps) * 100).toFixed(0);
  return `| ${name} | ${base.rps.toFixed(0)} | ${base.p99} | ${ours.rps.toFixed(0)} | ${ours.p99} | **${ratio}%** | ${ours.non2xx} |`;
}

export const HEADER = '| scenario | baseline req/s | baseline p99 ms | tablebase req/s | tablebase p99 ms | ratio | tablebase non-2xx |\n|---|---|---|---|---|---|---|';
