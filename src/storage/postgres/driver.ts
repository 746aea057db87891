/**
 * node-postgres (`pg`) behind the Driver interface (issue #15). Two pools: reads, and writes (the
 * serialized writer's transactions, migrations, the admin CLI), so a long read never holds up a
 * commit. Every query is parameterized; LIMIT/OFFSET literals are checked integers (compiler.ts).
 *
 * Sessions run with `TimeZone=UTC` (timestamps read back as `…Z` ISO strings) and
 * `synchronous_commit=on`: COMMIT returns only after the WAL is flushed, so an answered write
 * survives `kill -9` of the node and of the database server (issue #15, "Durability").
 */
import pg from 'pg';
import { ApiError, infrastructureError } from '../../core/errors.js';
import type { Driver, Tx } from '../driver.js';
import type { RawRow } from '../plan.js';
import type { SqlParams } from '../driver.js';
import { postgresDialect } from './dialect.js';
import { describeUrl, typeParsers } from './types.js';

export interface PostgresOptions {
  /** Read connections (default 8). */
  readPool?: number;
  /** Write connections (default 4): the writer's transaction, migrations, locks. */
  writePool?: number;
  /** Bound on one read statement (default 30 s): a hostile filter cannot hold a connection forever. */
  readTimeoutMs?: number;
}

type Queryable = pg.Pool | pg.PoolClient;

/**
 * Named (server-side prepared) statements for SQL texts seen twice: PostgreSQL then skips parsing
 * and planning on every later run. Capped for the process's lifetime, because a connection keeps
 * every statement it prepared: once the cap is reached, new texts run unnamed.
 */
const MAX_NAMED = 500;
class StatementNames {
  #seen = new Set<string>();
  #named = new Map<string, string>();
  name(sql: string): string | undefined {
    const known = this.#named.get(sql);
    if (known !== undefined || this.#named.size >= MAX_NAMED) return known;
    if (!this.#seen.has(sql)) {
      if (this.#seen.size < MAX_NAMED * 4) this.#seen.add(sql);
      return undefined;
    }
    const name = `tb${this.#named.size}`;
    this.#named.set(sql, name);
    return name;
  }
}
const names = new StatementNames();

async function query(q: Queryable, sql: string, params: SqlParams = []): Promise<pg.QueryResult<RawRow>> {
  // Statements with no parameters may hold several commands (migrations): never prepared.
  const name = params.length > 0 ? names.name(sql) : undefined;
  return q.query<RawRow>(name ? { name, text: sql, values: params as unknown[] } : { text: sql, values: params as unknown[] });
}

async function all(q: Queryable, sql: string, params: SqlParams = []): Promise<RawRow[]> {
  return (await query(q, sql, params)).rows;
}

/** Client mistakes PostgreSQL reports, mapped as SQLite's are (docs/reference/conventions.md). */
const CLIENT_ERRORS: Record<string, () => ApiError> = {
  '23505': () => new ApiError('CONFLICT'),
  '23503': () => new ApiError('BAD_REQUEST', 'A referenced row does not exist, or other rows still reference this one'),
  '23502': () => new ApiError('BAD_REQUEST', 'A required column is missing'),
  // PostgreSQL text and jsonb cannot hold U+0000 (SQLite can): the client's value is refused.
  '22021': () => new ApiError('BAD_REQUEST', 'Text cannot contain NUL characters'),
  '22P05': () => new ApiError('BAD_REQUEST', 'Text cannot contain NUL characters'),
};

export class PostgresDriver implements Driver {
  readonly dialect = postgresDialect;
  readonly databaseName: string;
  /** One write connection stays free for migrations, locks and the admin CLI's writes. */
  readonly maxWriters: number;
  #read: pg.Pool;
  #write: pg.Pool;
  #url: string;

  constructor(url: string, options: PostgresOptions = {}) {
    this.#url = url;
    this.databaseName = new URL(url).pathname.slice(1) || 'postgres';
    const base = { connectionString: url, types: typeParsers };
    const session = '-c TimeZone=UTC -c synchronous_commit=on';
    this.#read = new pg.Pool({ ...base, max: options.readPool ?? 8, options: `${session} -c statement_timeout=${options.readTimeoutMs ?? 30_000}` });
    this.#write = new pg.Pool({ ...base, max: options.writePool ?? 4, options: session });
    this.maxWriters = Math.max(1, (options.writePool ?? 4) - 1);
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    this.#read.on('error', () => {});
    this.#write.on('error', () => {});
  }

  async all(sql: string, params?: SqlParams): Promise<RawRow[]> {
    return all(this.#read, sql, params);
  }
  async get(sql: string, params?: SqlParams): Promise<RawRow | undefined> {
    return (await all(this.#read, sql, params))[0];
  }
  /** A write outside the writer (migrations, admin CLI). */
  async run(sql: string, params?: SqlParams): Promise<{ changes: number }> {
    const r = await query(this.#write, sql, params);
    return { changes: r.rowCount ?? 0 };
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await this.#write.connect();
    let broken: Error | undefined;
    const tx: Tx = {
      all: (sql, params) => all(client, sql, params),
      get: async (sql, params) => (await all(client, sql, params))[0],
      run: async (sql, params) => ({ changes: (await query(client, sql, params)).rowCount ?? 0 }),
      // Savepoint names come from the writer (constants), never from a request.
      savepoint: async (name) => void (await client.query(`SAVEPOINT ${name}`)),
      release: async (name) => void (await client.query(`RELEASE SAVEPOINT ${name}`)),
      rollbackTo: async (name) => void (await client.query(`ROLLBACK TO SAVEPOINT ${name}`)),
    };
    try {
      await client.query('BEGIN');
      try {
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  async execScript(sql: string): Promise<void> {
    const client = await this.#write.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * Runs `fn` while holding a session-level advisory lock, so nodes starting together apply
   * migrations one at a time (the second finds them applied). The lock lives on its own
   * connection and is released when `fn` settles or the connection dies.
   */
  async exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.#write.connect();
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      try {
        return await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
      }
    } finally {
      client.release();
    }
  }

  async sizeBytes(): Promise<number> {
    const r = await this.get('SELECT pg_database_size(current_database()) AS n');
    return Number(r?.n ?? 0);
  }

  mapError(err: unknown): ApiError | null {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code !== 'string') return null;
    const known = CLIENT_ERRORS[code];
    if (known) return known();
    // Lost connections, a server shutting down, too many clients: the one mapping (core/errors.ts).
    const infra = infrastructureError(err);
    if (infra) return infra;
    // Serialization failures and deadlocks: retry at once.
    if (code === '40001' || code === '40P01') return new ApiError('UNAVAILABLE', undefined, { headers: { 'Retry-After': '1' } });
    return null;
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.get('SELECT 1 AS ok'))?.ok === 1;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#read.end(), this.#write.end()]);
  }

  toString(): string {
    return `PostgreSQL at ${describeUrl(this.#url)}`;
  }
}

/** Connects and checks the server answers; an unreachable one is a one-line error naming the host. */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresDriver> {
  const driver = new PostgresDriver(url, options);
  try {
    await driver.get('SELECT 1 AS ok');
  } catch (err) {
    await driver.close().catch(() => {});
    throw new Error(`cannot connect to PostgreSQL at ${describeUrl(url)}: ${(err as Error).message}`);
  }
  return driver;
}
