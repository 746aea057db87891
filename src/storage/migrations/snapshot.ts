/**
 * The stored schema as a plain JSON value: what the database holds for a project (tables, their
 * columns and indexes), without rules, hooks or views (views are inlined by the server as
 * subqueries and never stored). Migrations diff two snapshots; `schema.json` in the project's
 * `migrations/` folder keeps the one after the newest migration.
 *
 * Deterministic by construction: tables sorted by name, columns in declared order (`id` first),
 * indexes sorted by name — so an unchanged project always diffs to nothing.
 */
import type { CollectionModel, ProjectModel } from '../../core/model.js';
import type { ColumnKind, ColumnSpec, Json, ScalarKind } from '../../define/columns.js';

export const SNAPSHOT_VERSION = 1;

export interface ColumnSchema {
  /** snake_case SQL name. */
  readonly name: string;
  readonly kind: ColumnKind;
  /** Item kind of a list column, else null. */
  readonly of: ScalarKind | null;
  /** The dialect's storage type (`TEXT`, `INTEGER`, ...). */
  readonly type: string;
  readonly nullable: boolean;
  /**
   * The stored (DDL) default in JSON form, null for none. A function default is evaluated per
   * insert by the server, so it is not a DDL default and shows here as null.
   */
  readonly default: Json | null;
  /** Enforced by the `uq_<table>_<column>` index listed in the table's indexes (the id by its primary key). */
  readonly unique: boolean;
  /** The table whose `id` this column holds (docs/reference/columns.md), else null. */
  readonly references: string | null;
}

export interface IndexSchema {
  readonly name: string;
  /** SQL column names, in index order. */
  readonly columns: readonly string[];
  readonly unique: boolean;
}

export interface TableSchema {
  readonly name: string;
  readonly columns: readonly ColumnSchema[];
  readonly indexes: readonly IndexSchema[];
}

export interface SchemaSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  readonly dialect: string;
  readonly tables: readonly TableSchema[];
}

/** Names the migration machinery keeps for itself (`_migrations`, the `_tb_new_*` rebuild tables). */
export const MIGRATIONS_TABLE = '_migrations';
export const REBUILD_PREFIX = '_tb_new_';

export function indexName(table: string, columns: readonly string[], unique: boolean): string {
  return `${unique ? 'uq' : 'idx'}_${table}_${columns.join('_')}`;
}

/** A JSON copy of a default value with object keys sorted, so equal values compare equal as text. */
function canonicalJson(value: unknown, where: string): Json {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`Invalid project: ${where} has a non-finite default`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => canonicalJson(v, where));
  if (typeof value === 'object') {
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonicalJson(v, where);
    }
    return out;
  }
  throw new Error(`Invalid project: ${where} has a default that is not JSON`);
}

function storedDefault(spec: ColumnSpec, where: string): Json | null {
  if (!spec.hasDefault || spec.default === undefined || typeof spec.default === 'function') return null;
  return canonicalJson(spec.default, where);
}

/**
 * What a snapshot needs of a dialect: its name and column types. Structural, not `Dialect`, so the
 * Dialect's DDL capability (dialect.ts) can name snapshot types without an import cycle.
 */
export interface TypeSource {
  readonly name: string;
  columnType(spec: ColumnSpec): string;
}

function tableSchema(t: CollectionModel, dialect: TypeSource): TableSchema {
  const columns: ColumnSchema[] = t.columnList.map((c) => {
    const id = c.spec.kind === 'id';
    return Object.freeze({
      name: c.sql,
      kind: c.spec.kind,
      of: c.spec.of ?? null,
      type: dialect.columnType(c.spec),
      nullable: id ? false : c.spec.nullable,
      default: id ? null : storedDefault(c.spec, `${t.name}.${c.name}`),
      unique: id || c.spec.unique,
      references: c.spec.references ?? null,
    });
  });
  const indexes = new Map<string, IndexSchema>();
  const add = (cols: readonly string[], unique: boolean) => {
    const name = indexName(t.name, cols, unique);
    if (!indexes.has(name)) indexes.set(name, Object.freeze({ name, columns: Object.freeze([...cols]), unique }));
  };
  for (const c of t.columnList) {
    if (c.spec.kind === 'id') continue; // the primary key is its own unique index
    if (c.spec.unique) add([c.sql], true);
    if (c.spec.index) add([c.sql], false);
  }
  for (const ix of t.indexes) add(ix.columns.map((name) => t.columns.get(name)!.sql), ix.unique);
  // A referencing column gets an index unless one already leads with it: without it, every
  // delete of a referenced row scans the whole referencing table for its ON DELETE action.
  for (const c of columns) {
    if (!c.references) continue;
    const covered = [...indexes.values()].some((ix) => ix.columns[0] === c.name);
    if (!covered) add([c.name], false);
  }
  const sorted = [...indexes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Object.freeze({ name: t.name, columns: Object.freeze(columns), indexes: Object.freeze(sorted) });
}

/** The stored schema of `model` for `dialect`. Views are left out: they are never stored. */
export function schemaOf(model: ProjectModel, dialect: TypeSource): SchemaSnapshot {
  const tables = model.tables
    .filter((t) => t.kind === 'table')
    .map((t) => {
      if (t.name === MIGRATIONS_TABLE || t.name.startsWith(REBUILD_PREFIX)) {
        throw new Error(`Invalid project: the table name "${t.name}" is reserved for migrations`);
      }
      return tableSchema(t, dialect);
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Object.freeze({ version: SNAPSHOT_VERSION, dialect: dialect.name, tables: Object.freeze(tables) });
}

/** Checks the shape of a snapshot read back from `schema.json` (hand edits, merges). */
export function isSnapshot(value: unknown): value is SchemaSnapshot {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Partial<SchemaSnapshot>;
  if (s.version !== SNAPSHOT_VERSION || typeof s.dialect !== 'string' || !Array.isArray(s.tables)) return false;
  return s.tables.every(
    (t) =>
      typeof t?.name === 'string' &&
      Array.isArray(t.columns) &&
      Array.isArray(t.indexes) &&
      t.columns.every((c: Partial<ColumnSchema> | null) => typeof c?.name === 'string' && typeof c.type === 'string' && typeof c.nullable === 'boolean' && c.default !== undefined) &&
      t.indexes.every((ix: Partial<IndexSchema> | null) => typeof ix?.name === 'string' && Array.isArray(ix.columns) && typeof ix.unique === 'boolean'),
  );
}
