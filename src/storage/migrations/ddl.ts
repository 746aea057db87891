/**
 * The migrations' own bookkeeping SQL (the `_migrations` table), the same on every database, and
 * the entry points that hand schema changes to the dialect's DDL (sqlite/ddl.ts, postgres/ddl.ts).
 */
import type { ColumnSpec } from '../../define/columns.js';
import type { DdlContext, Dialect } from '../dialect.js';
import { stringLiteral } from './ddl-parts.js';
import type { Change } from './diff.js';
import { MIGRATIONS_TABLE } from './snapshot.js';

export type { DdlContext } from '../dialect.js';

/** The statements (without trailing semicolons) that carry out `changes`, in order. */
export const migrationStatements = (changes: readonly Change[], ctx: DdlContext): string[] => ctx.dialect.ddl.migrationStatements(changes, ctx);

const TEXT_SPEC: ColumnSpec = { kind: 'text', nullable: false, default: undefined, hasDefault: false, unique: false, index: false, references: undefined, of: undefined, watches: undefined };

/** The bookkeeping table of applied migrations. */
export function migrationsTableSql(d: Dialect): string {
  const text = d.columnType(TEXT_SPEC);
  const q = d.quote;
  return `CREATE TABLE IF NOT EXISTS ${q(MIGRATIONS_TABLE)} (${q('name')} ${text} NOT NULL PRIMARY KEY, ${q('checksum')} ${text} NOT NULL, ${q('applied_at')} ${text} NOT NULL)`;
}

export function appliedMigrationsSql(d: Dialect): string {
  const q = d.quote;
  return `SELECT ${q('name')} AS ${q('name')}, ${q('checksum')} AS ${q('checksum')} FROM ${q(MIGRATIONS_TABLE)} ORDER BY ${q('name')}`;
}

/** Literals rather than parameters: it runs inside the migration's script (one transaction). */
export function recordMigrationSql(d: Dialect, name: string, checksum: string, appliedAt: string): string {
  const q = d.quote;
  return `INSERT INTO ${q(MIGRATIONS_TABLE)} (${q('name')}, ${q('checksum')}, ${q('applied_at')}) VALUES (${stringLiteral(name)}, ${stringLiteral(checksum)}, ${stringLiteral(appliedAt)})`;
}

/** Connection settings around applying migrations (run outside the migration's transaction). */
export const applySession = (d: Dialect): { before: readonly string[]; after: readonly string[] } => d.ddl.applySession;

/** Statements that end each migration's script and abort it if any reference dangles. */
export const integrityCheckSql = (d: Dialect): readonly string[] => d.ddl.integrityCheck;
