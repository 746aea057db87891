/**
 * The schema of every table and view as the dashboard's table browser and row editor need it
 * (docs/reference/dashboard.md Tables): columns with their kind, nullability, default, reference and whether the
 * server manages them, so the editor can pick the right input and mark required fields.
 */
import type { CollectionModel, ProjectModel } from '../core/model.js';

export interface ColumnInfo {
  readonly name: string;
  readonly kind: string;
  readonly nullable: boolean;
  /** A JSON default; `null` with `hasDefault` false means none. Function defaults show as `"(computed)"`. */
  readonly default: unknown;
  readonly hasDefault: boolean;
  /** Required on create: not nullable, no default, not set by the server. */
  readonly required: boolean;
  /** Set by the server (id, createdAt, updatedAt, updatedWhen, isVerified): read-only in the editor. */
  readonly managed: boolean;
  readonly unique: boolean;
  /** The table whose `id` this column holds. */
  readonly references: string | null;
  /** Item kind of a list column. */
  readonly of: string | null;
  /** The watched column of an updatedWhen column. */
  readonly watches: string | null;
  /** Sortable and filterable like the ordinary API allows. */
  readonly sortable: boolean;
}

export interface CollectionInfo {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly internal: boolean;
  /** Auth tables: `{admin}`; otherwise null. */
  readonly auth: { readonly admin: boolean } | null;
  readonly prefix: string | null;
  readonly columns: readonly ColumnInfo[];
  readonly indexes: readonly { readonly columns: readonly string[]; readonly unique: boolean }[];
  /** Views: the tables they read. */
  readonly reads: readonly string[];
}

function columnsOf(c: CollectionModel): ColumnInfo[] {
  return c.columnList
    .filter((col) => !col.hidden) // passwords never leave the server, not even their column
    .map((col) => {
      const s = col.spec;
      const fnDefault = typeof s.default === 'function';
      return {
        name: col.name,
        kind: s.kind,
        nullable: s.nullable,
        default: s.hasDefault ? (fnDefault ? '(computed)' : (s.default ?? null)) : null,
        hasDefault: s.hasDefault,
        required: c.kind === 'table' && !col.managed && !s.nullable && !s.hasDefault && s.filledBy !== 'hook',
        managed: col.managed,
        unique: s.unique,
        references: s.references ?? null,
        of: s.of ?? null,
        watches: s.watches ?? null,
        sortable: s.kind !== 'json' && s.kind !== 'list',
      };
    });
}

export function describeCollection(c: CollectionModel): CollectionInfo {
  return {
    name: c.name,
    kind: c.kind,
    internal: c.internal,
    auth: c.auth ? { admin: c.auth.admin } : null,
    prefix: c.prefix ?? null,
    columns: columnsOf(c),
    indexes: c.indexes.map((ix) => ({ columns: [...ix.columns], unique: ix.unique })),
    reads: [...c.reads],
  };
}

/** Every table (internal `_` tables included: admins may inspect them) and view, tables first. */
export function describeSchema(model: ProjectModel): CollectionInfo[] {
  return [...model.tables, ...model.views].map(describeCollection);
}
