/**
 * Reaching one chosen worker of `serve --workers` from a test: node:cluster hands each new
 * connection to the next worker, and every answer's X-Request-Id starts with its process's
 * prefix. A pinned client keeps one kept-alive connection, so all its requests reach one worker.
 */
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { parseJson, type Envelope, type Reply, type TestServer } from '../helpers/server.js';

/** The worker that answered: the X-Request-Id prefix (one per process). */
export const workerOf = (requestId: string | null | undefined): string => String(requestId ?? '').split('-')[0]!;

export interface Pinned {
  readonly worker: string;
  call<T = Envelope>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  get<T = Envelope>(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  close(): void;
}

function pinnedClient(base: string): { call: Pinned['call']; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call = <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    new Promise<Reply<T>>((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const h: Record<string, string | number> = { ...headers };
      if (payload !== undefined) Object.assign(h, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      const req = request(base + path, { method, agent, headers: h }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const hs = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') hs.set(k, v);
          resolve({ status: res.statusCode ?? 0, json: parseJson<T>(text), text, headers: hs });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/** One pinned client per distinct worker, `n` of them (new connections until n workers answered). */
export async function pinWorkers(server: TestServer, n: number): Promise<Pinned[]> {
  const found = new Map<string, Pinned>();
  for (let i = 0; i < 50 * n && found.size < n; i++) {
    const c = pinnedClient(server.base);
    const r = await c.call('GET', '/health');
    const worker = workerOf(r.headers.get('x-request-id'));
    if (found.has(worker)) {
      c.close();
      continue;
    }
    found.set(worker, {
      worker,
      call: c.call,
      get: (path, body, headers) => c.call('GET', `${path}?body=${encodeURIComponent(JSON.stringify(body))}`, undefined, headers),
      close: c.close,
    });
  }
  if (found.size < n) throw new Error(`only ${found.size} of ${n} workers answered`);
  return [...found.values()];
}

/** Process ids of the server's forked workers (children of the primary running the CLI; not esbuild's service). */
export function workerPids(server: TestServer): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(server.proc.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('tablebase.mjs'))
      .map((l) => Number(l.trim().split(/\s+/)[0]))
      .filter((p) => p > 0);
  } catch {
    return []; // ps exits 1 when there are none
  }
}

/** True while the process exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
