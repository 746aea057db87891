/**
 * Everything that differs between databases in one small interface (Kysely's dialect idea: its
 * `DialectAdapter` answers capability questions such as `supportsReturning`, so no caller ever
 * asks which database it is). The query compiler and row functions (compiler.ts, rows.ts), the
 * SQL builder (sql.ts), the internal-table repositories (repos/) and migrations ask it for
 * quoting, placeholders, column types, value encoding, capabilities and DDL; the serialized
 * writer needs none of it. sqlite/dialect.ts and postgres/dialect.ts implement it, each with its
 * DDL beside it (sqlite/ddl.ts, postgres/ddl.ts).
 *
 * `name` is for storage's own bookkeeping (migration folders, snapshots); code outside storage/
 * asks a capability instead (scripts/check-storage-boundary.ts keeps it so).
 */
import type { ColumnModel } from '../core/model.js';
import type { ColumnSpec } from '../define/columns.js';
import type { Change } from './migrations/diff.js';
import type { SchemaSnapshot } from './migrations/snapshot.js';
import type { RawRow, Row } from './plan.js';

export interface DdlContext {
  readonly dialect: Dialect;
  readonly prev: SchemaSnapshot | null;
  readonly next: SchemaSnapshot;
  /** ISO time of generation: fills createdAt/updatedAt of existing rows when those columns are added. */
  readonly now: string;
}

/** A dialect's schema statements: how its migrations are written and applied. */
export interface DialectDdl {
  /** The statements (without trailing semicolons) that carry out `changes`, in order. */
  migrationStatements(changes: readonly Change[], ctx: DdlContext): string[];
  /** Connection settings run outside the migration's transaction, before and after it. */
  readonly applySession: { readonly before: readonly string[]; readonly after: readonly string[] };
  /** Statements that end each migration's script and abort it if any reference dangles. */
  readonly integrityCheck: readonly string[];
}

/** Adds a parameter value and answers its placeholder. */
export type Bind = (value: unknown) => string;

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** Quotes an identifier (already validated against the schema). */
  quote(identifier: string): string;
  /** Placeholder of the n-th parameter, 1-based (`?` or `$n`). */
  param(n: number): string;
  /** A JSON-form value of `column` → the value bound to the database. */
  encode(column: ColumnModel, value: unknown): unknown;
  /** One list item → the value bound for `has` comparisons. */
  encodeItem(column: ColumnModel, item: unknown): unknown;
  /** Builds a decoder for rows selected with camelCase aliases: database values → JSON values, in place. */
  decoder(columns: readonly ColumnModel[]): (raw: RawRow) => Row;
  /**
   * Case-sensitive text predicates where % and _ are literal (docs/reference/data.md). `bind` adds a parameter
   * and answers its placeholder.
   */
  textMatch(op: 'contains' | 'startsWith' | 'endsWith', column: string, value: string, bind: Bind): string;
  /** The list column `column` contains `item` (already encoded with encodeItem). */
  listHas(column: string, item: unknown, bind: Bind): string;
  /**
   * One ORDER BY term. Nulls rank first ascending and last descending, as SQLite ranks them
   * (and the live engine's in-memory order follows), whatever the database's own default.
   */
  orderTerm(column: string, direction: 'asc' | 'desc', nullable: boolean): string;
  /**
   * Appended to a select whose rows a write is about to change: PostgreSQL locks them (`FOR
   * UPDATE`) so two nodes writing at once answer as some serial order would; SQLite's one
   * writer already serializes every write transaction, so it appends nothing.
   */
  readonly lockForWrite: string;
  /** DDL type (with NOT NULL/DEFAULT handled by the caller) for a column spec. */
  columnType(spec: ColumnSpec): string;

  // Capabilities: what callers ask instead of the dialect's name.
  /** DDL type of a byte column (`BLOB`, `BYTEA`). */
  readonly blobType: string;
  /** `SELECT … FOR UPDATE OF t SKIP LOCKED` exists: concurrent claimers skip each other's rows. */
  readonly supportsSkipLocked: boolean;
  /** `INSERT/UPDATE/DELETE … RETURNING` answers the rows written. */
  readonly supportsReturning: boolean;
  /** How an insert-or-update is written: `INSERT … ON CONFLICT (…) DO UPDATE SET c = excluded.c`. */
  readonly upsert: 'on-conflict';
  /**
   * Several server processes on several machines may serve this database at once (PostgreSQL);
   * false when one process owns it (SQLite's file): leases held at start are then stale, and
   * files on this node's disk are every node's files.
   */
  readonly sharedByNodes: boolean;
  /** Schema statements (migrations) in this dialect. */
  readonly ddl: DialectDdl;
}
