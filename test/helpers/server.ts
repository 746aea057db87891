/**
 * Starts a real Tablebase server process on a free loopback port for end-to-end tests, and a
 * small client that speaks its JSON conventions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { request as httpRequest } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../src/storage/postgres/test-database.js';
import { killGroup, marker, track, untrack } from './processes.js';

export const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/tablebase.mjs');

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** A row as the API answers it: its `id`, and the other columns as `unknown` until a test narrows them. */
export type Row = { id: string } & Record<string, unknown>;

/** The docs/reference/conventions.md error envelope's `error`. */
export interface ApiError {
  code: string;
  message: string;
  /** Where the request was wrong (a 400); absent on other errors. */
  details: { path: string; message: string }[];
}

/** What sign-up, sign-in and refresh answer in `data` (docs/reference/auth.md). */
export interface SessionData {
  user: Row & { email: string };
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

/**
 * How a test reads an answer's JSON unless it asks `call<T>` for a precise shape: the docs/reference/conventions.md
 * envelope, `data` (a row, a page of rows, a list of rows or a session) or `error`. A real answer
 * carries only one of these; all are declared so a test reads the one it expects without narrowing.
 */
export interface Envelope {
  data: Row & Row[] & { items: Row[] } & SessionData;
  error: ApiError;
}

export interface Reply<T = Envelope> {
  status: number;
  /** The parsed body; undefined when it is empty or not JSON (read `text` then). */
  json: T;
  text: string;
  headers: Headers;
}

export interface TestServer {
  base: string;
  port: number;
  dataDir: string;
  /** The `--storage` URL the server was given (the S3 run), or undefined: `<data>/photos/`. */
  storageUrl: string | undefined;
  proc: ChildProcess;
  log: () => string;
  env: Record<string, string>;
  call<T = Envelope>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  /** GET with the JSON in the `body` query parameter. */
  get<T = Envelope>(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply<T>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops the process and removes the data folder. */
  dispose(): Promise<void>;
}

export interface StartOptions {
  project?: string;
  dataDir?: string;
  env?: Record<string, string>;
  command?: 'serve' | '__run-dev';
  /** More flags (the cluster tests pass `--database` and `--redis` for two nodes of one deployment). */
  args?: string[];
  /** Serve HTTPS with these PEM files (test/helpers/tls.ts makes a self-signed pair); `base` is https://. `call` is not usable then. */
  tls?: { cert: string; key: string };
  /**
   * `--workers N`. Without it the server runs as ONE process (WORKERS=1, or
   * TABLEBASE_TEST_WORKERS), whatever `serve`'s default: the suite runs many servers at once on
   * small machines, and only test/workers/ tests what several workers change.
   */
  workers?: number;
}

/** How long startServer waits for /health (a loaded two-core machine, issue #27 item 9). */
export const START_TIMEOUT_MS = 120_000;

export const secret = () => randomBytes(32).toString('hex');

/**
 * TABLEBASE_TEST_DB=postgres (the PostgreSQL run of the e2e suite): each data folder gets its own
 * fresh database, kept across restarts of a server on that folder; the run's teardown
 * (test/helpers/postgres-setup.ts) drops them all.
 */
const databases = new Map<string, Promise<TestDatabase>>();
export async function databaseArgs(dataDir: string): Promise<string[]> {
  if (process.env.TABLEBASE_TEST_DB !== 'postgres') return [];
  if (!databases.has(dataDir)) databases.set(dataDir, createTestDatabase());
  // docs/reference/conformance.md: the PostgreSQL run also shares through Redis (a fresh REDIS_PREFIX per server).
  return ['--database', (await databases.get(dataDir)!).url, '--redis', process.env.TABLEBASE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'];
}

/** PostgreSQL run: every row of the data folder's database as JSON text; undefined on SQLite. */
export async function databaseText(dataDir: string): Promise<string | undefined> {
  const db = databases.get(dataDir);
  if (!db) return undefined;
  const c = new pg.Client({ connectionString: (await db).url });
  await c.connect();
  try {
    const tables = await c.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'`);
    const parts: string[] = [];
    for (const t of tables.rows) parts.push(...(await c.query(`SELECT row_to_json(t)::text AS j FROM "${t.name.replace(/"/g, '""')}" t`)).rows.map((r) => String(r.j)));
    return parts.join('\n');
  } finally {
    await c.end();
  }
}

/**
 * TABLEBASE_TEST_STORAGE=s3 (the S3 run, vitest.s3.config.ts): each data folder gets its own key
 * prefix in the run's bucket, kept across restarts of a server on that folder.
 */
const prefixes = new Map<string, string>();
export function storageArgs(dataDir: string): string[] {
  if (process.env.TABLEBASE_TEST_STORAGE !== 's3') return [];
  if (!prefixes.has(dataDir)) prefixes.set(dataDir, `s3://${process.env.TABLEBASE_TEST_S3_BUCKET}/run-${randomBytes(6).toString('hex')}`);
  return ['--storage', prefixes.get(dataDir)!];
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tb-test-'));
  const project = options.project ?? join(ROOT, 'examples/conformance');
  // TABLEBASE_TEST_WORKERS=auto runs the suite with serve's own default (one worker per CPU).
  const env = {
    WORKERS: process.env.TABLEBASE_TEST_WORKERS ?? '1',
    JWT_SECRET: secret(),
    PASSWORD_SECRET: secret(),
    LOG_LEVEL: 'info',
    REDIS_PREFIX: `tb-test:${randomBytes(6).toString('hex')}:`,
    ...options.env,
  };
  const database = options.args?.includes('--database') ? [] : await databaseArgs(dataDir);
  const storage = options.args?.includes('--storage') ? [] : storageArgs(dataDir);
  const allArgs = [
    ...database,
    ...storage,
    ...(options.tls ? ['--tls-cert', options.tls.cert, '--tls-key', options.tls.key] : []),
    ...(options.workers ? ['--workers', String(options.workers)] : []),
    ...(options.args ?? []),
  ];
  const storageAt = allArgs.indexOf('--storage');
  const proc = spawn(process.execPath, [BIN, options.command ?? 'serve', '--project', project, '--data', dataDir, '--host', '127.0.0.1', '--port', String(port), ...allArgs], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...marker() },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: stop() and the run's teardown reach the server and anything it forks.
    detached: true,
  });
  track(proc.pid);
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      // The leader is gone; anything it forked into its group goes with it.
      killGroup(proc.pid!);
      untrack(proc.pid);
      r(code);
    }),
  );
  let up = false;
  // A loaded two-core machine may take tens of seconds to start a server: wait up to two minutes.
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!up && proc.exitCode === null && Date.now() < deadline) {
    try {
      up = (options.tls ? await insecureStatus(`${base}/health`) : (await fetch(`${base}/health`)).status) === 200;
    } catch {
      /* not listening yet */
    }
    // 503 while workers start (or the database opens): wait as for a refused connection.
    if (!up) await new Promise((r) => setTimeout(r, 100));
  }
  if (!up) {
    killGroup(proc.pid!);
    throw new Error(`server did not start:\n${output}`);
  }
  const call = async <T = Envelope>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> => {
    // fetch refuses a GET with a body; docs/reference/conventions.md allows one, so send those through node:http.
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) return rawRequest<T>(base, method, path, body, headers);
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const r = await fetch(base + path, init);
    const text = await r.text();
    return { status: r.status, json: parseJson<T>(text), text, headers: r.headers };
  };
  const server: TestServer = {
    base,
    port,
    dataDir,
    storageUrl: storageAt >= 0 ? allArgs[storageAt + 1] : undefined,
    proc,
    env,
    log: () => output,
    call,
    get: <T = Envelope>(path: string, body: unknown, headers?: Record<string, string>) => call<T>('GET', `${path}?body=${encodeURIComponent(JSON.stringify(body))}`, undefined, headers),
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    // SIGKILL reaches the whole group at once (a multi-process server's workers included).
    dispose: async () => {
      if (proc.exitCode === null && proc.signalCode === null) killGroup(proc.pid!);
      await exited;
      if (!options.dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
        const db = databases.get(dataDir);
        databases.delete(dataDir);
        await (await db)?.drop();
      }
    },
  };
  return server;
}

/** GET over HTTPS accepting a self-signed certificate (fetch has no such switch); the status. */
function insecureStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
}

/** A reply's `json`: the parsed text, or undefined when it is empty or not JSON (as `Reply.json` says). */
export function parseJson<T>(text: string): T {
  try {
    return text ? JSON.parse(text) : (undefined as T);
  } catch {
    return undefined as T;
  }
}

function rawRequest<T>(base: string, method: string, path: string, body: unknown, headers: Record<string, string>): Promise<Reply<T>> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, json: parseJson<T>(text), text, headers: h });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
