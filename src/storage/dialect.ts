/**
 * Everything that differs between databases in one small interface (Kysely's dialect idea). The
 * query compiler and row functions (compiler.ts, rows.ts), migrations and the auth SQL store ask
 * it for quoting, placeholders, column types and value encoding; the serialized writer needs none
 * of it. sqlite/dialect.ts implements it now, postgres/dialect.ts next.
 */
import type { ColumnModel } from '../core/model.js';
import type { ColumnSpec } from '../define/columns.js';
import type { RawRow, Row } from './plan.js';

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
   * Case-sensitive text predicates where % and _ are literal (SPEC §4). `bind` adds a parameter
   * and answers its placeholder.
   */
  textMatch(op: 'contains' | 'startsWith' | 'endsWith', column: string, value: string, bind: Bind): string;
  /** The list column `column` contains `item` (already encoded with encodeItem). */
  listHas(column: string, item: unknown, bind: Bind): string;
  /** DDL type (with NOT NULL/DEFAULT handled by the caller) for a column spec. */
  columnType(spec: ColumnSpec): string;
}
