/**
 * better-sqlite3 behind the Driver interface. Two connections: the writer (used only by the
 * serialized writer and migrations) and a reader, so reads never see a write transaction that is
 * still open while a hook awaits (WAL gives the reader the last committed snapshot).
 */
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { ApiError, infrastructureError } from '../../core/errors.js';
import type { Driver, RawRow, SqlParams, Tx } from '../driver.js';
import { sqliteDialect, usesTextMatch } from './dialect.js';
import { ReadPool, type ReadPoolOptions } from './read-pool.js';
import { costOf, MAX_CACHED_SQL, STATEMENT_CACHE, STATEMENT_CACHE_BYTES } from './statement-budget.js';

type Db = Database.Database;
type Stmt = Database.Statement<unknown[], RawRow>;

export interface SqliteOptions {
  /** `normal` survives a crash of the process (kill -9); `full` also survives power loss. */
  synchronous?: 'normal' | 'full';
  /** Worker threads for text-matching reads (read-pool.ts). */
  readPool?: ReadPoolOptions;
}

/** A row built from its values, in the statement's column order. */
type RowOf = (values: unknown[]) => RawRow;

/**
 * Rows are read as arrays of values (better-sqlite3's raw mode) and built into objects by a
 * function compiled once per column list: on Node 20 better-sqlite3 builds each object in C++
 * with one property set per column, each re-internalizing the column's name and walking V8's
 * slow path for a new property (counted with callgrind: 690k instructions for a page of 50 rows
 * of 6 columns, 45% of a list request); an object literal in compiled JavaScript costs a
 * fraction of it. The rows are the same: the same keys in the same order (a duplicate name keeps
 * its first place and its last value, as when set one by one), the same values.
 */
const rowMakers = new Map<string, RowOf>();
const MAX_ROW_MAKERS = 512;

/** null: build the rows in C++ as before (`__proto__` would set the prototype in a literal). */
function rowMaker(names: readonly string[]): RowOf | null {
  if (names.includes('__proto__')) return null;
  const key = names.join('\0');
  let make = rowMakers.get(key);
  if (!make) {
    if (rowMakers.size >= MAX_ROW_MAKERS) rowMakers.clear();
    try {
      // Names go in as JSON string literals: any column name is a valid, inert property key.
      make = new Function('v', `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`) as RowOf;
    } catch {
      return null; // node --disallow-code-generation-from-strings: the rows better-sqlite3 builds
    }
    rowMakers.set(key, make);
  }
  return make;
}

interface Prepared {
  readonly s: Stmt;
  /** Set for cached statements that return rows: `s` is in raw mode and this builds each row. */
  readonly row: RowOf | null;
}

/**
 * A cache of prepared statements (preparing costs far more than running), bounded in count and
 * in estimated bytes (statement-budget.ts); the oldest entries go first.
 */
class Statements {
  #db: Db;
  #cache = new Map<string, Prepared>();
  #bytes = 0;
  constructor(db: Db) {
    this.#db = db;
  }
  get(sql: string): Prepared {
    let p = this.#cache.get(sql);
    if (!p) {
      const s = this.#db.prepare(sql) as Stmt;
      // A statement run once is not worth compiling a row builder for.
      if (sql.length > MAX_CACHED_SQL) return { s, row: null };
      const row = s.reader ? rowMaker(s.columns().map((c) => c.name)) : null;
      if (row) s.raw(true);
      p = { s, row };
      const cost = costOf(sql);
      while (this.#cache.size > 0 && (this.#cache.size >= STATEMENT_CACHE || this.#bytes + cost > STATEMENT_CACHE_BYTES)) {
        const oldest = this.#cache.keys().next().value!;
        this.#cache.delete(oldest);
        this.#bytes -= costOf(oldest);
      }
      this.#cache.set(sql, p);
      this.#bytes += cost;
    }
    return p;
  }
  /** Cached statements and their estimated bytes (tests). */
  stats(): { count: number; bytes: number } {
    return { count: this.#cache.size, bytes: this.#bytes };
  }
  all(sql: string, params: SqlParams = []): RawRow[] {
    const { s, row } = this.get(sql);
    if (!s.reader) {
      s.run(...params);
      return [];
    }
    if (row === null) return s.all(...params);
    // The array of value arrays becomes the array of rows, in place.
    const rows = s.all(...params) as unknown[];
    for (let i = 0; i < rows.length; i++) rows[i] = row(rows[i] as unknown[]);
    return rows as RawRow[];
  }
  get1(sql: string, params: SqlParams = []): RawRow | undefined {
    const { s, row } = this.get(sql);
    if (!s.reader) {
      s.run(...params);
      return undefined;
    }
    if (row === null) return s.get(...params);
    const values = s.get(...params) as unknown[] | undefined;
    return values === undefined ? undefined : row(values);
  }
  run(sql: string, params: SqlParams = []): { changes: number } {
    const { s } = this.get(sql);
    if (s.reader) {
      s.all(...params);
      return { changes: 0 };
    }
    return { changes: s.run(...params).changes };
  }
}

/** The writer's statements as a transaction handle (see SqliteDriver.transaction). */
class WriterTx implements Tx {
  #w: Statements;
  constructor(w: Statements) {
    this.#w = w;
  }
  async all(sql: string, params?: SqlParams): Promise<RawRow[]> {
    return this.#w.all(sql, params);
  }
  async get(sql: string, params?: SqlParams): Promise<RawRow | undefined> {
    return this.#w.get1(sql, params);
  }
  async run(sql: string, params?: SqlParams): Promise<{ changes: number }> {
    return this.#w.run(sql, params);
  }
  async savepoint(name: string): Promise<void> {
    this.#w.run(`SAVEPOINT ${name}`);
  }
  async release(name: string): Promise<void> {
    this.#w.run(`RELEASE ${name}`);
  }
  async rollbackTo(name: string): Promise<void> {
    this.#w.run(`ROLLBACK TO ${name}`);
  }
}

function open(file: string, options: SqliteOptions, readonly: boolean): Db {
  const db = new Database(file, { readonly, fileMustExist: readonly });
  db.pragma('busy_timeout = 5000');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  }
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -32000');
  db.pragma('temp_store = MEMORY');
  return db;
}

export class SqliteDriver implements Driver {
  readonly dialect = sqliteDialect;
  readonly databaseName = 'sqlite';
  readonly file: string;
  #writer: Db;
  #reader: Db;
  #w: Statements;
  #r: Statements;
  #pool: ReadPool;
  #inTx = false;
  /** The writer connection as a Tx: one object for every transaction (SQLite has one at a time), not six closures per commit. */
  #tx: Tx;
  #committed: (() => void) | undefined;

  constructor(file: string, options: SqliteOptions = {}) {
    this.file = file;
    this.#writer = open(file, options, false);
    this.#reader = open(file, options, true);
    this.#w = new Statements(this.#writer);
    this.#r = new Statements(this.#reader);
    this.#pool = new ReadPool(file, options.readPool);
    this.#tx = new WriterTx(this.#w);
  }

  /** Text matching may cost time proportional to stored text: off the event loop (read-pool.ts). */
  async all(sql: string, params?: SqlParams): Promise<RawRow[]> {
    return usesTextMatch(sql) ? this.#pool.all(sql, params) : this.#r.all(sql, params);
  }
  async get(sql: string, params?: SqlParams): Promise<RawRow | undefined> {
    return usesTextMatch(sql) ? this.#pool.get(sql, params) : this.#r.get1(sql, params);
  }

  /** Statement-cache sizes of the writer and reader connections (tests, metrics). */
  statementStats(): { writer: { count: number; bytes: number }; reader: { count: number; bytes: number } } {
    return { writer: this.#w.stats(), reader: this.#r.stats() };
  }
  /** A write outside the writer (migrations, admin CLI). */
  async run(sql: string, params?: SqlParams): Promise<{ changes: number }> {
    const r = this.#w.run(sql, params);
    if (!this.#inTx) this.#committed?.();
    return r;
  }

  /**
   * Called synchronously after every commit of this connection, before any answer goes out:
   * continuous backup (src/backup/) notes the WAL's committed end and the time here (one read of the WAL index), so each
   * commit carries its commit time; the frames are read later on the backup's worker thread.
   */
  onCommitted(fn: (() => void) | undefined): void {
    this.#committed = fn;
  }

  /** Pages of WAL before the writer checkpoints by itself; 0 while backup checkpoints instead (docs/reference/backups.md). */
  setAutoCheckpoint(pages: number): void {
    this.#writer.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(pages))}`);
  }

  /**
   * Bytes the WAL file is cut back to when the writer starts it over after a checkpoint, if it grew
   * past them (-1: never cut). Backup's checkpoints reuse the WAL in place, so without a limit a
   * burst (or a destination that was down) would leave it at its largest size for good.
   */
  setWalSizeLimit(bytes: number): void {
    this.#writer.pragma(`journal_size_limit = ${Math.floor(bytes)}`);
  }

  /** Synchronous read for the hot path: same semantics as `all`, without a promise. */
  allSync(sql: string, params?: SqlParams): RawRow[] {
    return this.#r.all(sql, params);
  }
  getSync(sql: string, params?: SqlParams): RawRow | undefined {
    return this.#r.get1(sql, params);
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#inTx) throw new Error('transactions are serialized by the writer; nested call');
    this.#inTx = true;
    const w = this.#w;
    const tx = this.#tx;
    try {
      w.run('BEGIN IMMEDIATE');
      try {
        const result = await fn(tx);
        w.run('COMMIT');
        this.#committed?.();
        return result;
      } catch (err) {
        if (this.#writer.inTransaction) w.run('ROLLBACK');
        throw err;
      }
    } finally {
      this.#inTx = false;
    }
  }

  /** One file, one writer lock (BEGIN IMMEDIATE): migrations already apply one at a time. */
  exclusive<T>(_name: string, fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async execScript(sql: string): Promise<void> {
    this.#writer.exec('BEGIN IMMEDIATE');
    try {
      this.#writer.exec(sql);
      this.#writer.exec('COMMIT');
      this.#committed?.();
    } catch (err) {
      if (this.#writer.inTransaction) this.#writer.exec('ROLLBACK');
      throw err;
    }
  }

  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(this.file + suffix).size;
      } catch {
        /* no WAL yet */
      }
    }
    return total;
  }

  mapError(err: unknown): ApiError | null {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== 'string') return null;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return new ApiError('CONFLICT');
    if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return new ApiError('BAD_REQUEST', 'A referenced row does not exist, or other rows still reference this one');
    if (code === 'SQLITE_CONSTRAINT_NOTNULL') return new ApiError('BAD_REQUEST', 'A required column is missing');
    const infra = infrastructureError(err); // a full or failing disk: the one mapping (core/errors.ts)
    if (infra) return infra;
    if (code === 'SQLITE_BUSY') return new ApiError('UNAVAILABLE', undefined, { headers: { 'Retry-After': '1' } });
    return null;
  }

  async ping(): Promise<boolean> {
    try {
      return this.#r.get1('SELECT 1 AS ok')?.ok === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
    if (this.#reader.open) this.#reader.close();
    if (this.#writer.open) {
      try {
        this.#writer.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        /* best effort */
      }
      this.#writer.close();
    }
  }
}

/** Opens (creating if needed) the database file. The writer opens first so the reader finds the file. */
export function openSqlite(file: string, options: SqliteOptions = {}): SqliteDriver {
  return new SqliteDriver(file, options);
}
