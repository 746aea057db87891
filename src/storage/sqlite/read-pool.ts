/**
 * Reads whose cost grows with the stored text (text matching, docs/reference/data.md "Bounds") run on worker
 * threads, each with its own read-only connection, so one of them never holds the event loop:
 * better-sqlite3 is synchronous and has no progress handler or interrupt, so on the main thread a
 * 256-character `contains` over 40 texts of 500 KB blocked every other request for ~230 ms
 * (measured; with GLOB it was 7 s). Every other read stays on the main thread, where a prepared
 * primary-key lookup costs microseconds and a thread hop would cost more than the query.
 *
 * Time budget: a read that runs past `timeoutMs` has its worker terminated (the only way to stop
 * a running better-sqlite3 statement) and answers 503; the next read starts a fresh worker.
 * Workers start on first use, so servers that never match text start none.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ApiError } from '../../core/errors.js';
import type { RawRow, SqlParams } from '../driver.js';
import { MAX_CACHED_SQL, STATEMENT_CACHE, STATEMENT_CACHE_BYTES, statementCost } from './statement-budget.js';

export interface ReadPoolOptions {
  /** Worker threads (default 2). */
  size?: number;
  /** A read running longer is stopped (default 10 s). */
  timeoutMs?: number;
}

type Kind = 'all' | 'get';
interface Job {
  kind: Kind;
  sql: string;
  params: SqlParams;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}
interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

// Plain CommonJS evaluated by the worker: no TypeScript loader is registered in worker threads.
// The statement cache follows the main thread's budget (statement-budget.ts), passed in workerData.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('cache_size = -8000');
db.pragma('temp_store = MEMORY');
const cache = new Map();
let bytes = 0;
function prepare(sql) {
  let s = cache.get(sql);
  if (s) return s;
  s = db.prepare(sql);
  const cost = workerData.fixed + sql.length * workerData.perChar;
  if (sql.length > workerData.maxSql) return s;
  while (cache.size > 0 && (cache.size >= workerData.count || bytes + cost > workerData.bytes)) {
    const [k] = cache.keys();
    cache.delete(k);
    bytes -= workerData.fixed + k.length * workerData.perChar;
  }
  cache.set(sql, s);
  bytes += cost;
  return s;
}
parentPort.on('message', ({ kind, sql, params }) => {
  try {
    const s = prepare(sql);
    parentPort.postMessage({ ok: kind === 'get' ? s.get(...params) : s.all(...params) });
  } catch (err) {
    parentPort.postMessage({ error: { code: err && err.code, message: String(err && err.message) } });
  }
});
`;

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

export class ReadPool {
  readonly #file: string;
  readonly #size: number;
  readonly #timeoutMs: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(file: string, options: ReadPoolOptions = {}) {
    this.#file = file;
    this.#size = Math.max(1, options.size ?? 2);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  all(sql: string, params: SqlParams = []): Promise<RawRow[]> {
    return this.#submit('all', sql, params) as Promise<RawRow[]>;
  }

  get(sql: string, params: SqlParams = []): Promise<RawRow | undefined> {
    return this.#submit('get', sql, params) as Promise<RawRow | undefined>;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new ApiError('UNAVAILABLE'));
    await Promise.all(this.#slots.splice(0).map((s) => s.worker.terminate()));
  }

  #submit(kind: Kind, sql: string, params: SqlParams): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ApiError('UNAVAILABLE'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ kind, sql, params, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.job === null);
      if (!slot && this.#slots.length < this.#size) slot = this.#spawn();
      if (!slot) return;
      const job = this.#queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => this.#timeout(slot), this.#timeoutMs);
      slot.worker.postMessage({ kind: job.kind, sql: job.sql, params: job.params });
    }
  }

  #spawn(): Slot {
    const workerData = { module: BETTER_SQLITE3, file: this.#file, count: STATEMENT_CACHE, bytes: STATEMENT_CACHE_BYTES, maxSql: MAX_CACHED_SQL, ...statementCost };
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData }), job: null, timer: null };
    slot.worker.unref();
    slot.worker.on('message', (m: { ok?: unknown; error?: { code?: string; message: string } }) => {
      const job = this.#release(slot);
      if (!job) return;
      if (m.error) job.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else job.resolve(m.ok);
    });
    slot.worker.on('error', (err) => this.#drop(slot, err));
    slot.worker.on('exit', () => this.#drop(slot, new ApiError('UNAVAILABLE')));
    this.#slots.push(slot);
    return slot;
  }

  #release(slot: Slot): Job | null {
    const job = slot.job;
    slot.job = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    queueMicrotask(() => this.#pump());
    return job;
  }

  #timeout(slot: Slot): void {
    const job = this.#release(slot);
    job?.reject(new ApiError('UNAVAILABLE', 'The query took too long; narrow the filter'));
    this.#remove(slot);
    void slot.worker.terminate();
  }

  #drop(slot: Slot, err: unknown): void {
    if (!this.#remove(slot)) return;
    this.#release(slot)?.reject(err);
  }

  #remove(slot: Slot): boolean {
    const i = this.#slots.indexOf(slot);
    if (i < 0) return false;
    this.#slots.splice(i, 1);
    return true;
  }
}
