/**
 * The compiled project: definitions turned into frozen runtime metadata that the pipeline,
 * storage, live engine and OpenAPI generator read. Compiling validates the project once, so a
 * mistake in a definition fails at start with a clear message, never at request time.
 */
import type { ColumnMap, ColumnSpec } from '../define/columns.js';
import type { Project } from '../define/project.js';
import type { AnyTable, AuthExtras, RowRules, TableHooks, TableRules, CustomHandler } from '../define/table.js';
import type { OrderBy, TablePolicies, UntypedRow } from '../define/types.js';
import type { AnyView, SelectMap, ViewRules } from '../define/view.js';
import { isCamelName, isTableName, toSnake } from './naming.js';

export interface ColumnModel {
  /** camelCase JSON name. */
  readonly name: string;
  /** snake_case SQL name. */
  readonly sql: string;
  readonly spec: ColumnSpec;
  /** Hidden from every response (password). */
  readonly hidden: boolean;
  /** Set by the server (createdAt, updatedAt, updatedWhen, isVerified on create). */
  readonly managed: boolean;
}

export interface ViewSource {
  readonly from: string;
  readonly joins: readonly { table: string; type: 'left' | 'inner'; left: { table: string; sql: string }; right: { table: string; sql: string } }[];
  readonly select: readonly { name: string; table: string; sql: string }[];
}

export interface AuthModel {
  readonly admin: boolean;
  readonly signUpFields: readonly string[];
  readonly options: AuthExtras<UntypedRow>;
}

export interface CollectionModel {
  readonly kind: 'table' | 'view';
  readonly name: string;
  readonly internal: boolean;
  /** Columns by camelCase name, `id` included. */
  readonly columns: ReadonlyMap<string, ColumnModel>;
  readonly columnList: readonly ColumnModel[];
  readonly prefix: string | undefined;
  readonly defaultOrder: readonly Required<OrderBy>[];
  readonly rules: (TableRules & ViewRules) | undefined;
  /** Rows reach these as plain records (an update's `after` is built before it is stored). */
  readonly rowRules: RowRules<Record<string, unknown>> | undefined;
  readonly hooks: TableHooks<UntypedRow, Record<string, unknown>> | undefined;
  readonly operations: Readonly<Record<string, CustomHandler<UntypedRow>>>;
  readonly policies: TablePolicies;
  readonly indexes: readonly { columns: readonly string[]; unique: boolean }[];
  readonly auth: AuthModel | undefined;
  readonly view: ViewSource | undefined;
  /** Tables whose changes can alter this collection's rows (itself, or a view's sources). */
  readonly reads: readonly string[];
  /** True when the row filter must run (row canView exists and requiresPerRowCheck is not false). */
  readonly rowFiltered: boolean;
}

export interface ProjectModel {
  readonly project: Project;
  readonly collections: ReadonlyMap<string, CollectionModel>;
  readonly tables: readonly CollectionModel[];
  readonly views: readonly CollectionModel[];
}

const PREFIX = /^[a-z0-9]{2,8}$/;
const ID_SPEC: ColumnSpec = Object.freeze({
  kind: 'id',
  nullable: false,
  default: undefined,
  hasDefault: false,
  unique: true,
  index: false,
  references: undefined,
  of: undefined,
  watches: undefined,
});

function fail(message: string): never {
  throw new Error(`Invalid project: ${message}`);
}

function columnModel(name: string, spec: ColumnSpec): ColumnModel {
  const managed = spec.kind === 'createdAt' || spec.kind === 'updatedAt' || spec.kind === 'updatedWhen' || spec.kind === 'isVerified' || spec.kind === 'id';
  return Object.freeze({ name, sql: toSnake(name), spec, hidden: spec.kind === 'password', managed });
}

type Hooks = TableHooks<UntypedRow, Record<string, unknown>>;

/** A table's own hooks plus those `defineProject({ hooks })` declares for it; one hook named in both is ambiguous. */
function mergeHooks(table: string, own: Hooks | undefined, project: Hooks | undefined): Hooks | undefined {
  if (!project) return own;
  if (!own) return Object.freeze({ ...project });
  for (const name of Object.keys(project)) if (name in own) fail(`table "${table}": hook ${name} is declared both on the table and in the project`);
  return Object.freeze({ ...own, ...project });
}

function compileTable(t: AnyTable, internal: boolean, projectHooks?: Hooks): CollectionModel {
  const o = t.options;
  if (!isTableName(t.name)) fail(`table name "${t.name}" must be lowercase letters, digits and _`);
  if (t.name.startsWith('_') && !internal) fail(`table "${t.name}": names starting with _ are reserved`);
  if (!PREFIX.test(o.prefix)) fail(`table "${t.name}": prefix must be 2-8 of [a-z0-9]`);
  const columns = new Map<string, ColumnModel>([['id', columnModel('id', ID_SPEC)]]);
  for (const [name, col] of Object.entries(o.columns as ColumnMap)) {
    if (name === 'id') fail(`table "${t.name}": id is implicit`);
    if (!isCamelName(name)) fail(`table "${t.name}": column "${name}" must be camelCase`);
    columns.set(name, columnModel(name, col.spec));
  }
  for (const c of columns.values()) {
    if (c.spec.kind === 'updatedWhen' && !columns.has(c.spec.watches ?? '')) fail(`table "${t.name}": ${c.name} watches unknown column ${c.spec.watches}`);
    if (c.spec.kind === 'list' && !c.spec.of) fail(`table "${t.name}": list column ${c.name} needs an item kind`);
  }
  const indexes = (o.indexes ?? []).map((ix) => {
    for (const c of ix.columns) if (!columns.has(c)) fail(`table "${t.name}": index names unknown column ${c}`);
    return Object.freeze({ columns: Object.freeze([...ix.columns]), unique: !!ix.unique });
  });
  const rules = o.rules;
  const auth: AuthModel | undefined = t.auth ? Object.freeze({ admin: !!t.auth.admin, signUpFields: Object.freeze([...(t.auth.signUpFields ?? [])]), options: t.auth }) : undefined;
  for (const f of auth?.signUpFields ?? []) if (!columns.has(f) || columns.get(f)!.managed) fail(`table "${t.name}": signUpFields names ${f}`);
  return Object.freeze({
    kind: 'table' as const,
    name: t.name,
    internal,
    columns,
    columnList: Object.freeze([...columns.values()]),
    prefix: o.prefix,
    defaultOrder: Object.freeze([{ column: 'id', direction: 'asc' as const }]),
    rules,
    rowRules: o.rowRules,
    hooks: mergeHooks(t.name, o.hooks, projectHooks),
    operations: Object.freeze({ ...(o.operations ?? {}) }),
    policies: o.policies ?? {},
    indexes: Object.freeze(indexes),
    auth,
    view: undefined,
    reads: Object.freeze([t.name]),
    rowFiltered: !!o.rowRules?.canView && rules?.requiresPerRowCheck !== false,
  });
}

function compileView(v: AnyView, tables: ReadonlyMap<string, CollectionModel>): CollectionModel {
  const o = v.options;
  if (!isTableName(v.name) || v.name.startsWith('_')) fail(`view name "${v.name}" must be lowercase letters, digits and _`);
  const sourceColumn = (table: string, column: string): ColumnModel => {
    const t = tables.get(table) ?? fail(`view "${v.name}": unknown table ${table}`);
    return t.columns.get(column) ?? fail(`view "${v.name}": unknown column ${table}.${column}`);
  };
  const columns = new Map<string, ColumnModel>();
  const select: ViewSource['select'][number][] = [];
  for (const [name, ref] of Object.entries(o.select as SelectMap)) {
    if (!isCamelName(name)) fail(`view "${v.name}": column "${name}" must be camelCase`);
    const src = sourceColumn(ref.table, ref.column);
    if (src.hidden) fail(`view "${v.name}": ${ref.table}.${ref.column} cannot be selected`);
    columns.set(name, Object.freeze({ name, sql: toSnake(name), spec: ref.spec, hidden: false, managed: false }));
    select.push(Object.freeze({ name, table: ref.table, sql: src.sql }));
  }
  if (columns.size === 0) fail(`view "${v.name}" selects no columns`);
  const joins = (o.joins ?? []).map((j) => {
    const [l, r] = j.on;
    return Object.freeze({
      table: j.table.name,
      type: j.type ?? 'left',
      left: { table: l.table, sql: sourceColumn(l.table, l.column).sql },
      right: { table: r.table, sql: sourceColumn(r.table, r.column).sql },
    });
  });
  const first = select[0]!.name;
  const defaultOrder = (o.defaultOrder ?? [{ column: first }]).map((ob) => {
    if (!columns.has(ob.column)) fail(`view "${v.name}": default order names unknown column ${ob.column}`);
    return Object.freeze({ column: ob.column, direction: ob.direction ?? 'asc' });
  });
  const reads = [...new Set([o.from.name, ...joins.map((j) => j.table)])];
  return Object.freeze({
    kind: 'view' as const,
    name: v.name,
    internal: false,
    columns,
    columnList: Object.freeze([...columns.values()]),
    prefix: undefined,
    defaultOrder: Object.freeze(defaultOrder),
    rules: o.rules,
    rowRules: o.rowRules,
    hooks: undefined,
    operations: Object.freeze({}),
    policies: o.policies ?? {},
    indexes: Object.freeze([]),
    auth: undefined,
    view: Object.freeze({ from: o.from.name, joins: Object.freeze(joins), select: Object.freeze(select) }),
    reads: Object.freeze(reads),
    rowFiltered: !!o.rowRules?.canView && o.rules?.requiresPerRowCheck !== false,
  });
}

/** Validates and freezes the project. `internalTables` are the server's own `_` tables. */
export function compileProject(project: Project, internalTables: readonly AnyTable[] = []): ProjectModel {
  const collections = new Map<string, CollectionModel>();
  const tables: CollectionModel[] = [];
  const add = (c: CollectionModel) => {
    if (collections.has(c.name)) fail(`"${c.name}" is declared twice`);
    collections.set(c.name, c);
  };
  for (const name of Object.keys(project.hooks ?? {})) if (!project.tables.some((t) => t.name === name)) fail(`hooks name unknown table ${name}`);
  for (const t of project.tables) add(compileTable(t, false, project.hooks?.[t.name]));
  for (const t of internalTables) add(compileTable(t, true));
  for (const c of collections.values()) tables.push(c);
  for (const c of tables) {
    for (const col of c.columnList) {
      const ref = col.spec.references;
      if (ref && !collections.has(ref)) fail(`table "${c.name}": ${col.name} references unknown table ${ref}`);
    }
  }
  const views = (project.views ?? []).map((v) => compileView(v, collections));
  for (const v of views) add(v);
  return Object.freeze({ project, collections, tables: Object.freeze(tables), views: Object.freeze(views) });
}
