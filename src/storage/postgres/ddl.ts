/**
 * Migration statements for PostgreSQL, from the same changes as SQLite's (one schema history).
 * PostgreSQL alters columns in place, so there is no rebuild: each change is one or a few
 * ALTER TABLE statements, all inside the migration's one transaction (DDL is transactional).
 *
 * Foreign keys keep PostgreSQL's own constraint name for a column-level REFERENCES
 * (`<table>_<column>_fkey`), so a later change can drop and re-add them by name.
 */
import type { DdlContext, Dialect, DialectDdl } from '../dialect.js';
import { columnDef, createIndexSql, literal, stringLiteral, typeOf, wholeTableSql } from '../migrations/ddl-parts.js';
import { backfillOf, type Change } from '../migrations/diff.js';
import type { ColumnSchema } from '../migrations/snapshot.js';

type AlterChange = Extract<Change, { op: 'alterColumn' }>;

function fillSql(d: Dialect, c: ColumnSchema, now: string): string | null {
  const fill = backfillOf(c);
  return fill === 'default' ? literal(d, c, c.default) : fill === 'now' ? stringLiteral(now) : null;
}

const fkName = (table: string, column: string) => `${table}_${column}_fkey`.slice(0, 63);

function foreignKey(d: Dialect, table: string, c: ColumnSchema): string {
  const q = d.quote;
  return `ALTER TABLE ${q(table)} ADD CONSTRAINT ${q(fkName(table, c.name))} FOREIGN KEY (${q(c.name)}) REFERENCES ${q(c.references!)} (${q('id')}) ON DELETE ${c.nullable ? 'SET NULL' : 'NO ACTION'}`;
}

/** A required column without a stored default is added nullable, filled, then made required. */
function addColumn(d: Dialect, table: string, c: ColumnSchema, now: string): string[] {
  const q = d.quote;
  if (c.nullable || c.default !== null) return [`ALTER TABLE ${q(table)} ADD COLUMN ${columnDef(d, c)}`];
  const out = [`ALTER TABLE ${q(table)} ADD COLUMN ${columnDef(d, { ...c, nullable: true, references: null })}`];
  const fill = fillSql(d, c, now);
  if (fill) out.push(`UPDATE ${q(table)} SET ${q(c.name)} = ${fill}`);
  out.push(`ALTER TABLE ${q(table)} ALTER COLUMN ${q(c.name)} SET NOT NULL`);
  if (c.references) out.push(foreignKey(d, table, c));
  return out;
}

/** How stored values convert when a column's PostgreSQL type changes (widenings and the rest). */
function conversion(d: Dialect, from: ColumnSchema, to: ColumnSchema): string {
  const col = d.quote(from.name);
  const target = typeOf(d, to);
  const source = typeOf(d, from);
  const cast = target.replace(/ COLLATE .*$/, '');
  if (target === 'JSONB') return `to_jsonb(${col})`;
  if (source === 'JSONB') return `(${col} #>> '{}')::${cast}`;
  if (source === 'TIMESTAMPTZ(3)' && target.startsWith('TEXT')) return `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  if (source === 'BOOLEAN' && target === 'BIGINT') return `${col}::int::bigint`;
  if (target === 'BOOLEAN' && (source === 'BIGINT' || source === 'DOUBLE PRECISION')) return `${col} <> 0`;
  return `${col}::${cast}`;
}

function alterColumn(d: Dialect, ch: AlterChange, now: string): string[] {
  const q = d.quote;
  const { from, to, fields } = ch;
  const alter = (what: string) => `ALTER TABLE ${q(ch.table)} ALTER COLUMN ${q(to.name)} ${what}`;
  const out: string[] = [];
  const retype = typeOf(d, from) !== typeOf(d, to);
  const refChanged = fields.includes('references') || (to.references !== null && fields.includes('nullable'));
  if (refChanged && from.references) out.push(`ALTER TABLE ${q(ch.table)} DROP CONSTRAINT IF EXISTS ${q(fkName(ch.table, from.name))}`);
  if (retype) {
    if (from.default !== null) out.push(alter('DROP DEFAULT'));
    out.push(alter(`TYPE ${typeOf(d, to)} USING ${conversion(d, from, to)}`));
  }
  if (retype || fields.includes('default')) out.push(to.default !== null ? alter(`SET DEFAULT ${literal(d, to, to.default)}`) : alter('DROP DEFAULT'));
  if (fields.includes('nullable')) {
    if (to.nullable) out.push(alter('DROP NOT NULL'));
    else {
      const fill = fillSql(d, to, now);
      if (fill) out.push(`UPDATE ${q(ch.table)} SET ${q(to.name)} = ${fill} WHERE ${q(to.name)} IS NULL`);
      out.push(alter('SET NOT NULL'));
    }
  }
  if (refChanged && to.references) out.push(foreignKey(d, ch.table, to));
  return out;
}

function migrationStatements(changes: readonly Change[], ctx: DdlContext): string[] {
  const d = ctx.dialect;
  const q = d.quote;
  const out: string[] = [];
  for (const c of changes) {
    const whole = wholeTableSql(d, c);
    if (whole) {
      out.push(...whole);
      continue;
    }
    switch (c.op) {
      case 'createIndex':
        out.push(createIndexSql(d, c.table, c.index));
        break;
      case 'dropIndex':
        // A dropped column already took its indexes with it.
        out.push(`DROP INDEX IF EXISTS ${q(c.index.name)}`);
        break;
      case 'addColumn':
        out.push(...addColumn(d, c.table, c.column, ctx.now));
        break;
      case 'dropColumn':
        out.push(`ALTER TABLE ${q(c.table)} DROP COLUMN ${q(c.column.name)}`);
        break;
      case 'alterColumn':
        out.push(...alterColumn(d, c, ctx.now));
        break;
    }
  }
  return out;
}

/**
 * PostgreSQL's DDL: in-place ALTERs; DDL is transactional and foreign keys are checked as the
 * statements run, so no session settings and no closing integrity check.
 */
export const postgresDdl: DialectDdl = Object.freeze({
  migrationStatements,
  applySession: Object.freeze({ before: [], after: [] }),
  integrityCheck: [],
});
