/**
 * Schema diff: two snapshots → the ordered list of changes that turns the first into the second.
 * Every change says whether it is destructive (may lose data or fail on existing rows), because
 * those need an explicit `--allow-destructive` (issue: "destructive changes need an explicit flag").
 *
 * Renames are not detected: a renamed table or column is a drop plus a create, which is
 * destructive and therefore never happens silently. The generated SQL file can be edited before
 * it is applied when a rename is what was meant.
 */
import type { ColumnSchema, IndexSchema, SchemaSnapshot, TableSchema } from './snapshot.js';

export type ColumnField = 'kind' | 'type' | 'nullable' | 'default' | 'references';

interface Base {
  readonly table: string;
  readonly destructive: boolean;
  /** Why a destructive change is destructive. */
  readonly reason?: string;
}

export type Change =
  | (Base & { readonly op: 'createTable'; readonly next: TableSchema })
  | (Base & { readonly op: 'dropTable'; readonly prev: TableSchema })
  | (Base & { readonly op: 'addColumn'; readonly column: ColumnSchema })
  | (Base & { readonly op: 'dropColumn'; readonly column: ColumnSchema })
  | (Base & { readonly op: 'alterColumn'; readonly from: ColumnSchema; readonly to: ColumnSchema; readonly fields: readonly ColumnField[] })
  | (Base & { readonly op: 'createIndex'; readonly index: IndexSchema })
  | (Base & { readonly op: 'dropIndex'; readonly index: IndexSchema });

/**
 * Kind changes that keep every stored value valid (a widening). Any other kind change may leave
 * values the server cannot read back as the new kind, so it counts as destructive.
 */
const WIDENINGS = new Set([
  'integer>real',
  'boolean>integer',
  'email>text',
  'timestamp>text',
  'createdAt>timestamp',
  'updatedAt>timestamp',
  'updatedWhen>timestamp',
  'createdAt>text',
  'updatedAt>text',
  'updatedWhen>text',
  'list>json',
]);

/** Server-set timestamps that rows lacking them get filled with the migration's time. */
const TIME_FILLED = new Set(['createdAt', 'updatedAt']);

/**
 * How existing rows get a value for a NOT NULL column they lack (a new column, or one that
 * becomes NOT NULL): its stored default, the migration's time for createdAt/updatedAt, or nothing.
 */
export function backfillOf(column: ColumnSchema): 'default' | 'now' | null {
  if (column.default !== null) return 'default';
  if (TIME_FILLED.has(column.kind)) return 'now';
  return null;
}

const json = (v: unknown) => JSON.stringify(v);

function columnFields(from: ColumnSchema, to: ColumnSchema): ColumnField[] {
  const fields: ColumnField[] = [];
  if (from.kind !== to.kind || from.of !== to.of) fields.push('kind');
  if (from.type !== to.type) fields.push('type');
  if (from.nullable !== to.nullable) fields.push('nullable');
  if (json(from.default) !== json(to.default)) fields.push('default');
  if (from.references !== to.references) fields.push('references');
  return fields;
}

function alterReason(from: ColumnSchema, to: ColumnSchema, fields: readonly ColumnField[]): string | undefined {
  const kindChanged = fields.includes('kind') || fields.includes('type');
  const widening = from.of === to.of && WIDENINGS.has(`${from.kind}>${to.kind}`);
  if (kindChanged && !widening) return `stored values may not fit the new kind (${from.kind} → ${to.kind})`;
  if (fields.includes('nullable') && !to.nullable && backfillOf(to) === null) {
    return 'it becomes required without a default: applying fails if a row holds null';
  }
  return undefined;
}

function sortByName<T extends { name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Referenced tables first (self and circular references ignored), so every dialect can create them in order. */
function creationOrder(tables: readonly TableSchema[]): TableSchema[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: TableSchema[] = [];
  const visit = (t: TableSchema) => {
    if (done.has(t.name) || visiting.has(t.name)) return;
    visiting.add(t.name);
    for (const c of t.columns) {
      const target = c.references ? byName.get(c.references) : undefined;
      if (target) visit(target);
    }
    visiting.delete(t.name);
    done.add(t.name);
    out.push(t);
  };
  for (const t of sortByName(tables)) visit(t);
  return out;
}

function tableChanges(prev: TableSchema, next: TableSchema): { columns: Change[]; dropIndexes: Change[]; createIndexes: Change[] } {
  const table = next.name;
  const before = new Map(prev.columns.map((c) => [c.name, c]));
  const after = new Map(next.columns.map((c) => [c.name, c]));
  const columns: Change[] = [];
  for (const c of prev.columns) {
    if (!after.has(c.name)) columns.push({ op: 'dropColumn', table, column: c, destructive: true, reason: 'its values are lost' });
  }
  for (const c of next.columns) {
    const old = before.get(c.name);
    if (!old) {
      const unfillable = !c.nullable && backfillOf(c) === null;
      columns.push(
        unfillable
          ? { op: 'addColumn', table, column: c, destructive: true, reason: 'it is required without a stored default: applying fails unless the table is empty' }
          : { op: 'addColumn', table, column: c, destructive: false },
      );
      continue;
    }
    const fields = columnFields(old, c);
    if (fields.length === 0) continue;
    const reason = alterReason(old, c, fields);
    columns.push({ op: 'alterColumn', table, from: old, to: c, fields, destructive: reason !== undefined, ...(reason ? { reason } : {}) });
  }
  const oldIx = new Map(prev.indexes.map((ix) => [ix.name, ix]));
  const newIx = new Map(next.indexes.map((ix) => [ix.name, ix]));
  const same = (a: IndexSchema, b: IndexSchema) => a.unique === b.unique && json(a.columns) === json(b.columns);
  const dropIndexes: Change[] = [];
  const createIndexes: Change[] = [];
  for (const ix of sortByName(prev.indexes)) {
    const keep = newIx.get(ix.name);
    if (!keep || !same(ix, keep)) dropIndexes.push({ op: 'dropIndex', table, index: ix, destructive: false });
  }
  for (const ix of sortByName(next.indexes)) {
    const had = oldIx.get(ix.name);
    if (!had || !same(had, ix)) createIndexes.push({ op: 'createIndex', table, index: ix, destructive: false });
  }
  return { columns, dropIndexes, createIndexes };
}

/**
 * The changes from `prev` (null: an empty database) to `next`, in the order they must run:
 * index drops, table creations, column changes, index creations, then table drops (last, once
 * nothing left references them).
 */
export function diffSchemas(prev: SchemaSnapshot | null, next: SchemaSnapshot): Change[] {
  const prevTables = new Map((prev?.tables ?? []).map((t) => [t.name, t]));
  const nextTables = new Map(next.tables.map((t) => [t.name, t]));
  const dropIndexes: Change[] = [];
  const columns: Change[] = [];
  const createIndexes: Change[] = [];
  for (const t of sortByName(next.tables)) {
    const old = prevTables.get(t.name);
    if (!old) continue;
    const c = tableChanges(old, t);
    dropIndexes.push(...c.dropIndexes);
    columns.push(...c.columns);
    createIndexes.push(...c.createIndexes);
  }
  const creates: Change[] = creationOrder(next.tables.filter((t) => !prevTables.has(t.name))).map((t) => ({
    op: 'createTable',
    table: t.name,
    next: t,
    destructive: false,
  }));
  const drops: Change[] = sortByName((prev?.tables ?? []).filter((t) => !nextTables.has(t.name))).map((t) => ({
    op: 'dropTable',
    table: t.name,
    prev: t,
    destructive: true,
    reason: 'its rows are lost',
  }));
  return [...dropIndexes, ...creates, ...columns, ...createIndexes, ...drops];
}

/** One line per change for headers, logs and error messages. */
export function describeChange(change: Change): string {
  const t = change.table;
  switch (change.op) {
    case 'createTable':
      return `create table ${t}`;
    case 'dropTable':
      return `drop table ${t}`;
    case 'addColumn':
      return `add column ${t}.${change.column.name}`;
    case 'dropColumn':
      return `drop column ${t}.${change.column.name}`;
    case 'alterColumn':
      return `change column ${t}.${change.to.name} (${change.fields.join(', ')})`;
    case 'createIndex':
      return `create ${change.index.unique ? 'unique ' : ''}index ${change.index.name}`;
    case 'dropIndex':
      return `drop ${change.index.unique ? 'unique ' : ''}index ${change.index.name}`;
  }
}

/** A file-name slug summarising the changes: `init`, `add_tasks_priority`, `drop_tasks_and_more`. */
export function slugOf(changes: readonly Change[], initial: boolean): string {
  if (initial) return 'init';
  const word = (c: Change): string => {
    switch (c.op) {
      case 'createTable':
        return `create_${c.table}`;
      case 'dropTable':
        return `drop_${c.table}`;
      case 'addColumn':
        return `add_${c.table}_${c.column.name}`;
      case 'dropColumn':
        return `drop_${c.table}_${c.column.name}`;
      case 'alterColumn':
        return `alter_${c.table}_${c.to.name}`;
      case 'createIndex':
        return `add_${c.index.name}`;
      case 'dropIndex':
        return `drop_${c.index.name}`;
    }
  };
  // Table and column changes name a migration better than the index changes they cause.
  const rank = (c: Change) => ['createTable', 'dropTable', 'addColumn', 'dropColumn', 'alterColumn', 'createIndex', 'dropIndex'].indexOf(c.op);
  const words = [...changes]
    .sort((a, b) => rank(a) - rank(b))
    .slice(0, 2)
    .map(word);
  if (changes.length > 2) words.push('more');
  return slugify(words.join('_and_')) || 'migration';
}

/** Lowercase [a-z0-9_], no leading, trailing or doubled underscores, at most 60 characters. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 60)
    .replace(/_+$/g, '');
}
