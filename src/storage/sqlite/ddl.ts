/**
 * SQLite's DDL: migration statements, the session settings around applying them and the closing
 * foreign-key check, built only through the Dialect (quote, columnType, encode). PostgreSQL's
 * are in postgres/ddl.ts; the pieces both share in migrations/ddl-parts.ts.
 *
 * SQLite can ALTER a table only to add a column (with limits) or drop an unconstrained one, so
 * anything else uses the documented 12-step rebuild (https://sqlite.org/lang_altertable.html#otheralter):
 * create `_tb_new_<t>` with the new shape, copy the common columns, drop the old table, rename
 * the new one, recreate its indexes. Foreign-key enforcement is switched off around the apply (it
 * cannot change inside a transaction) and a `foreign_key_check` inside the migration's
 * transaction aborts it if any reference is left dangling.
 *
 * ON DELETE: a nullable referencing column is `SET NULL` (the referencing row outlives the
 * referenced one); a required one is `NO ACTION`, i.e. restrict: deleting a still-referenced row
 * fails. Not the `RESTRICT` keyword: SQLite reports that one as SQLITE_CONSTRAINT_TRIGGER, while
 * NO ACTION gives SQLITE_CONSTRAINT_FOREIGNKEY, which the driver maps to a 400 (docs/reference/conventions.md). Without
 * deferrable constraints the two differ only inside a single statement. docs/reference/columns.md: "a column may
 * reference another table's id".
 */
import type { DdlContext, Dialect, DialectDdl } from '../dialect.js';
import { columnDef, createIndexSql, createTableSql, literal, stringLiteral, wholeTableSql } from '../migrations/ddl-parts.js';
import { backfillOf, type Change } from '../migrations/diff.js';
import { REBUILD_PREFIX, type ColumnSchema, type TableSchema } from '../migrations/snapshot.js';

/** SQLite's identifier quoting (the dialect's own, repeated here to avoid an import cycle). */
const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`;

/** SQLite's ADD COLUMN: a NOT NULL column needs a non-null default, a referencing one a null default. */
function addable(c: ColumnSchema): boolean {
  if (c.references) return c.nullable && c.default === null;
  return c.nullable || c.default !== null;
}

/** True when SQLite needs the rebuild for this change. */
function needsRebuild(change: Change): boolean {
  switch (change.op) {
    case 'addColumn':
      return !addable(change.column);
    case 'dropColumn':
      // DROP COLUMN refuses a column used by a foreign key.
      return change.column.references !== null;
    case 'alterColumn':
      // A kind change over the same storage type (email → text) changes nothing stored.
      return change.fields.some((f) => f !== 'kind');
    default:
      return false;
  }
}

function rebuildSql(ctx: DdlContext, prev: TableSchema, next: TableSchema): string[] {
  const d = ctx.dialect;
  const q = d.quote;
  const tmp = REBUILD_PREFIX + next.name;
  const old = new Map(prev.columns.map((c) => [c.name, c]));
  const targets: string[] = [];
  const sources: string[] = [];
  for (const c of next.columns) {
    const fill = c.nullable ? null : backfillOf(c);
    const fillSql = fill === 'default' ? literal(d, c, c.default) : fill === 'now' ? stringLiteral(ctx.now) : null;
    const had = old.get(c.name);
    if (had) {
      targets.push(q(c.name));
      sources.push(had.nullable && fillSql ? `COALESCE(${q(c.name)}, ${fillSql})` : q(c.name));
    } else if (fill === 'now') {
      // New columns with a stored default take it by being left out of the copy.
      targets.push(q(c.name));
      sources.push(fillSql!);
    }
  }
  return [
    createTableSql(d, next, tmp),
    `INSERT INTO ${q(tmp)} (${targets.join(', ')}) SELECT ${sources.join(', ')} FROM ${q(prev.name)}`,
    `DROP TABLE ${q(prev.name)}`,
    `ALTER TABLE ${q(tmp)} RENAME TO ${q(next.name)}`,
    ...next.indexes.map((ix) => createIndexSql(d, next.name, ix)),
  ];
}

function inPlaceSql(d: Dialect, change: Change): string[] {
  const q = d.quote;
  switch (change.op) {
    case 'addColumn':
      return [`ALTER TABLE ${q(change.table)} ADD COLUMN ${columnDef(d, change.column)}`];
    case 'dropColumn':
      return [`ALTER TABLE ${q(change.table)} DROP COLUMN ${q(change.column.name)}`];
    default:
      return [];
  }
}

/** The statements (without trailing semicolons) that carry out `changes`, in order. */
function migrationStatements(changes: readonly Change[], ctx: DdlContext): string[] {
  const d = ctx.dialect;
  const rebuilt = new Set<string>();
  for (const c of changes) if (needsRebuild(c)) rebuilt.add(c.table);
  const prevTables = new Map((ctx.prev?.tables ?? []).map((t) => [t.name, t]));
  const nextTables = new Map(ctx.next.tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const out: string[] = [];
  for (const c of changes) {
    const whole = wholeTableSql(d, c);
    if (whole) {
      out.push(...whole);
      continue;
    }
    switch (c.op) {
      case 'createIndex':
        if (!rebuilt.has(c.table)) out.push(createIndexSql(d, c.table, c.index));
        break;
      case 'dropIndex':
        // A rebuilt table loses its old indexes with the old table.
        if (!rebuilt.has(c.table)) out.push(`DROP INDEX ${d.quote(c.index.name)}`);
        break;
      default:
        if (!rebuilt.has(c.table)) out.push(...inPlaceSql(d, c));
        else if (!done.has(c.table)) {
          done.add(c.table);
          out.push(...rebuildSql(ctx, prevTables.get(c.table)!, nextTables.get(c.table)!));
        }
    }
  }
  return out;
}

/**
 * Connection settings around applying migrations. SQLite: foreign keys off, since the rebuild
 * drops a table other tables may reference (with them on, the drop would run their ON DELETE
 * actions); `PRAGMA foreign_keys` is ignored inside a transaction, hence outside the script.
 * `after` restores the driver's setting (it opens every connection with foreign keys on).
 */
const applySession = Object.freeze({ before: ['PRAGMA foreign_keys = OFF'], after: ['PRAGMA foreign_keys = ON'] });

export const FOREIGN_KEY_FAILURE = 'the migration leaves references to rows that do not exist (foreign key check failed)';

/**
 * Statements that end each migration's script and abort it (rolling everything back) if any
 * reference dangles. SQLite has no statement that fails on a query result outside a trigger, so
 * a temporary table whose insert trigger raises carries the check.
 */
function integrityCheck(): string[] {
  const guard = quote('_tb_fk_guard');
  return [
    `CREATE TEMP TABLE ${guard} (${quote('x')} INTEGER)`,
    `CREATE TEMP TRIGGER ${quote('_tb_fk_guard_raise')} BEFORE INSERT ON ${guard} BEGIN SELECT RAISE(ABORT, ${stringLiteral(FOREIGN_KEY_FAILURE)}); END`,
    `INSERT INTO ${guard} SELECT 1 FROM pragma_foreign_key_check LIMIT 1`,
    `DROP TABLE temp.${guard}`,
  ];
}

export const sqliteDdl: DialectDdl = Object.freeze({
  migrationStatements,
  applySession,
  integrityCheck: Object.freeze(integrityCheck()),
});
