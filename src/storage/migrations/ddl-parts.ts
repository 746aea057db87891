/**
 * DDL pieces every dialect's migration statements share: column definitions, CREATE TABLE and
 * CREATE INDEX, and SQL literals for stored defaults, all through the Dialect.
 */
import type { ColumnModel } from '../../core/model.js';
import type { ColumnSpec } from '../../define/columns.js';
import type { Dialect } from '../dialect.js';
import type { Change } from './diff.js';
import type { ColumnSchema, IndexSchema, TableSchema } from './snapshot.js';

export type { DdlContext } from '../dialect.js';

export function specOf(c: ColumnSchema): ColumnSpec {
  return {
    kind: c.kind,
    nullable: c.nullable,
    default: c.default ?? undefined,
    hasDefault: c.default !== null,
    unique: c.unique,
    index: false,
    references: c.references ?? undefined,
    of: c.of ?? undefined,
    watches: undefined,
  };
}

export function stringLiteral(s: string): string {
  // exec() hands the script to SQLite as a C string: a NUL would silently cut it short.
  if (s.includes('\u0000')) throw new Error('migrations: a default value contains a NUL character');
  return `'${s.replace(/'/g, "''")}'`;
}

/** A JSON-form value of `c` as an SQL literal, encoded the way the server stores it. */
export function literal(d: Dialect, c: ColumnSchema, value: unknown): string {
  const model: ColumnModel = { name: c.name, sql: c.name, spec: specOf(c), hidden: false, managed: false };
  const v = d.encode(model, value);
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`migrations: the default of ${c.name} is not a finite number`);
    return String(v);
  }
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return stringLiteral(v);
  throw new Error(`migrations: the default of ${c.name} cannot be written as SQL`);
}

/**
 * The column's type in `d`. Snapshots record SQLite's types (the schema history is one, kept in
 * the first dialect's terms); every dialect derives its own type from the column's kind.
 */
export const typeOf = (d: Dialect, c: ColumnSchema): string => d.columnType(specOf(c));

export function columnDef(d: Dialect, c: ColumnSchema): string {
  const q = d.quote;
  if (c.kind === 'id') return `${q(c.name)} ${typeOf(d, c)} NOT NULL PRIMARY KEY`;
  let s = `${q(c.name)} ${typeOf(d, c)}`;
  if (!c.nullable) s += ' NOT NULL';
  if (c.default !== null) s += ` DEFAULT ${literal(d, c, c.default)}`;
  if (c.references) s += ` REFERENCES ${q(c.references)} (${q('id')}) ON DELETE ${c.nullable ? 'SET NULL' : 'NO ACTION'}`;
  return s;
}

export function createTableSql(d: Dialect, t: TableSchema, as: string = t.name): string {
  return `CREATE TABLE ${d.quote(as)} (\n${t.columns.map((c) => `  ${columnDef(d, c)}`).join(',\n')}\n)`;
}

export function createIndexSql(d: Dialect, table: string, ix: IndexSchema): string {
  return `CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX ${d.quote(ix.name)} ON ${d.quote(table)} (${ix.columns.map(d.quote).join(', ')})`;
}


/** CREATE TABLE with its indexes, or DROP TABLE: the same statements on every database; else undefined. */
export function wholeTableSql(d: Dialect, c: Change): string[] | undefined {
  if (c.op === 'createTable') return [createTableSql(d, c.next), ...c.next.indexes.map((ix) => createIndexSql(d, c.table, ix))];
  if (c.op === 'dropTable') return [`DROP TABLE ${d.quote(c.table)}`];
  return undefined;
}
