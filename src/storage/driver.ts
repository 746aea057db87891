/**
 * The storage driver: the small interface every database implements (sqlite/ and postgres/,
 * same file names in each; both pass storage/driver-conformance.ts). Reads run on a read
 * connection and see committed data only; writes run inside `transaction`, which only the
 * writer (storage/writer.ts) and migrations call.
 */
import type { ApiError } from '../core/errors.js';
import type { Dialect } from './dialect.js';
import type { RawRow } from './plan.js';

export type SqlParams = readonly unknown[];
export type { RawRow } from './plan.js';

export interface SqlRunner {
  all(sql: string, params?: SqlParams): Promise<RawRow[]>;
  get(sql: string, params?: SqlParams): Promise<RawRow | undefined>;
  run(sql: string, params?: SqlParams): Promise<{ changes: number }>;
}

export interface Tx extends SqlRunner {
  savepoint(name: string): Promise<void>;
  release(name: string): Promise<void>;
  rollbackTo(name: string): Promise<void>;
}

export interface Driver extends SqlRunner {
  readonly dialect: Dialect;
  /** Write transactions that may run at once (SQLite: 1; PostgreSQL: its write pool less one). */
  readonly maxWriters?: number;
  /** The database's name (PostgreSQL) or `sqlite`: the default Redis prefix names it (docs/reference/scaling.md). */
  readonly databaseName: string;
  /** Runs `fn` in one write transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` while no other process runs an `exclusive` of the same name on this database
   * (migrations at start: PostgreSQL takes an advisory lock; SQLite's one file needs none).
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations) in one transaction. */
  execScript(sql: string): Promise<void>;
  /** Size of the database in bytes (metrics). */
  sizeBytes(): Promise<number>;
  /**
   * Maps a database error to a client error where it is the client's doing (unique → 409,
   * foreign key or not-null → 400); null for anything else (a 500).
   */
  mapError(err: unknown): ApiError | null;
  /** True while the database answers (health). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
