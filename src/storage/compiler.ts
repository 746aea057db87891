/**
 * Plans → SQL text and parameters. Every identifier comes from the compiled schema (never from a
 * request) and every value is a bound parameter (docs/reference/data.md). Dialect differences go through
 * `Dialect`, so PostgreSQL uses this file unchanged.
 */
import type { CollectionModel, ColumnModel } from '../core/model.js';
import type { Dialect } from './dialect.js';
import type { OrderTerm, ReadPlan, WhereNode } from './plan.js';

export interface Compiled {
  readonly sql: string;
  readonly params: unknown[];
}

type Bind = (value: unknown) => string;

function binder(d: Dialect, params: unknown[]): Bind {
  return (value) => {
    params.push(value);
    return d.param(params.length);
  };
}

/**
 * Per-dialect caches of per-collection SQL fragments: one process may hold models compiled for
 * two dialects (the driver conformance suite does), and a fragment quoted for one is wrong for
 * the other.
 */
export function perDialect<V>(): (d: Dialect) => WeakMap<CollectionModel, V> {
  const byDialect = new Map<string, WeakMap<CollectionModel, V>>();
  return (d) => {
    let m = byDialect.get(d.name);
    if (!m) byDialect.set(d.name, (m = new WeakMap()));
    return m;
  };
}
const selectCaches = perDialect<string>();
const sourceCaches = perDialect<string>();

/** `"id", "is_complete" AS "isComplete", ...`: rows come back keyed by their JSON names. */
export function selectList(d: Dialect, c: CollectionModel): string {
  const selectCache = selectCaches(d);
  let s = selectCache.get(c);
  if (s === undefined) {
    s = c.columnList
      .filter((col) => !col.hidden)
      .map((col) => (col.sql === col.name ? d.quote(col.sql) : `${d.quote(col.sql)} AS ${d.quote(col.name)}`))
      .join(', ');
    selectCache.set(c, s);
  }
  return s;
}

/**
 * The FROM target. A view becomes a subquery whose output columns carry their own names, so
 * sorting and filtering by them is never ambiguous even when joined tables share `id`.
 */
export function source(d: Dialect, c: CollectionModel): string {
  const sourceCache = sourceCaches(d);
  let s = sourceCache.get(c);
  if (s === undefined) {
    if (!c.view) s = d.quote(c.name);
    else {
      const v = c.view;
      const cols = v.select.map((x) => `${d.quote(x.table)}.${d.quote(x.sql)} AS ${d.quote(c.columns.get(x.name)!.sql)}`);
      const joins = v.joins.map(
        (j) => ` ${j.type === 'inner' ? 'INNER' : 'LEFT'} JOIN ${d.quote(j.table)} ON ${d.quote(j.left.table)}.${d.quote(j.left.sql)} = ${d.quote(j.right.table)}.${d.quote(j.right.sql)}`,
      );
      s = `(SELECT ${cols.join(', ')} FROM ${d.quote(v.from)}${joins.join('')}) AS ${d.quote(c.name)}`;
    }
    sourceCache.set(c, s);
  }
  return s;
}

/** The bound parameters of a list of values, comma-separated. */
function encList(d: Dialect, column: ColumnModel, items: readonly unknown[], bind: Bind): string {
  let out = '';
  for (let i = 0; i < items.length; i++) out += (i === 0 ? '' : ', ') + bind(d.encode(column, items[i]));
  return out;
}

// No closure per comparison: this runs for every filtered read, and under tsx (the checkout's
// `serve`) each named closure also pays a defineProperty for its name (issue #24 item 5).
function compileCmp(d: Dialect, column: ColumnModel, op: string, value: unknown, bind: Bind): string {
  const col = d.quote(column.sql);
  switch (op) {
    case 'eq':
      return value === null ? `${col} IS NULL` : `${col} = ${bind(d.encode(column, value))}`;
    case 'ne':
      // docs/reference/where.md: null is a value, so `ne: x` matches rows where the column is null.
      return value === null ? `${col} IS NOT NULL` : `(${col} IS NULL OR ${col} <> ${bind(d.encode(column, value))})`;
    case 'gt':
      return `${col} > ${bind(d.encode(column, value))}`;
    case 'gte':
      return `${col} >= ${bind(d.encode(column, value))}`;
    case 'lt':
      return `${col} < ${bind(d.encode(column, value))}`;
    case 'lte':
      return `${col} <= ${bind(d.encode(column, value))}`;
    case 'in': {
      const items = value as unknown[];
      return items.length === 0 ? '1=0' : `${col} IN (${encList(d, column, items, bind)})`;
    }
    case 'nin': {
      const items = value as unknown[];
      return items.length === 0 ? '1=1' : `(${col} IS NULL OR ${col} NOT IN (${encList(d, column, items, bind)}))`;
    }
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return d.textMatch(op, col, value as string, bind);
    case 'isNull':
      return value ? `${col} IS NULL` : `${col} IS NOT NULL`;
    case 'has':
      return d.listHas(col, d.encodeItem(column, value), bind);
    default:
      throw new Error(`unknown operator ${op}`);
  }
}

/**
 * SQL's NULL is "unknown"; the in-memory matcher treats unknown as false. Wrapping NOT's operand
 * in COALESCE(…, false) keeps the two in agreement while leaving top-level predicates indexable.
 */
export function compileWhere(d: Dialect, node: WhereNode, bind: Bind): string {
  switch (node.kind) {
    case 'and':
      return node.items.length === 0 ? '1=1' : node.items.length === 1 ? compileWhere(d, node.items[0]!, bind) : `(${node.items.map((n) => compileWhere(d, n, bind)).join(' AND ')})`;
    case 'or':
      return node.items.length === 0 ? '1=0' : node.items.length === 1 ? compileWhere(d, node.items[0]!, bind) : `(${node.items.map((n) => compileWhere(d, n, bind)).join(' OR ')})`;
    case 'not':
      return `NOT COALESCE(${compileWhere(d, node.item, bind)}, 1=0)`;
    case 'cmp':
      return compileCmp(d, node.column, node.op, node.value, bind);
  }
}

/** ORDER BY clauses of frozen order arrays (the planner's default order of each collection), per dialect. */
const orderCaches = new Map<string, WeakMap<readonly OrderTerm[], { collection: CollectionModel; sql: string }>>();

function orderClause(d: Dialect, plan: ReadPlan): string {
  if (plan.orderBy.length === 0) return '';
  if (!Object.isFrozen(plan.orderBy)) return buildOrderClause(d, plan);
  let cache = orderCaches.get(d.name);
  if (!cache) orderCaches.set(d.name, (cache = new WeakMap()));
  const hit = cache.get(plan.orderBy);
  if (hit?.collection === plan.collection) return hit.sql;
  const sql = buildOrderClause(d, plan);
  cache.set(plan.orderBy, { collection: plan.collection, sql });
  return sql;
}

function buildOrderClause(d: Dialect, plan: ReadPlan): string {
  const terms = plan.orderBy.map((t) => d.orderTerm(d.quote(t.column.sql), t.direction, t.column.spec.nullable));
  // Ties broken by id on tables, so pages are stable and the live engine sees one order.
  if (plan.collection.kind === 'table' && !plan.orderBy.some((t) => t.column.name === 'id')) terms.push(d.orderTerm(d.quote('id'), 'asc', false));
  return ` ORDER BY ${terms.join(', ')}`;
}

function whereClause(d: Dialect, plan: ReadPlan, bind: Bind): string {
  const w = compileWhere(d, plan.where, bind);
  return w === '1=1' ? '' : ` WHERE ${w}`;
}

/** Comparisons whose SQL has the one bound value whatever it is (a null `eq`/`ne` is written IS NULL). */
const ONE_VALUE_OPS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']);
/** Kept per column: past this, more shapes of one column (many limits) compile each time. */
const MAX_SHAPES_PER_COLUMN = 32;

interface OneValueSelect {
  readonly op: string;
  readonly orderBy: readonly OrderTerm[];
  readonly limit: number | undefined;
  readonly sql: string;
}
const oneValueCaches = perDialect<Map<ColumnModel, OneValueSelect[]>>();

/**
 * The SELECT of a read filtered by one comparison with one value (a get by id, a lookup by one
 * column) in a frozen order (the collection's default: plan/index.ts), by what decides its text:
 * column, operator, order, limit. Built once, not per request: the same text compiled again was
 * then flattened, hashed and compared by the statement cache to find its statement, about 4% of
 * a get's instructions (bench/get-instructions.ts, docs/lifecycle.md). The cached string is the
 * same object each time, so that lookup compares it by identity and its hash is kept.
 */
function oneValueSelect(d: Dialect, plan: ReadPlan): Compiled | undefined {
  const w = plan.where;
  if (w.kind !== 'cmp' || w.value === null || !ONE_VALUE_OPS.has(w.op) || plan.offset || !Object.isFrozen(plan.orderBy)) return undefined;
  const byCollection = oneValueCaches(d);
  let byColumn = byCollection.get(plan.collection);
  if (!byColumn) byCollection.set(plan.collection, (byColumn = new Map()));
  let shapes = byColumn.get(w.column);
  if (!shapes) byColumn.set(w.column, (shapes = []));
  for (let i = 0; i < shapes.length; i++) {
    const s = shapes[i]!;
    if (s.op === w.op && s.orderBy === plan.orderBy && s.limit === plan.limit) return { sql: s.sql, params: [d.encode(w.column, w.value)] };
  }
  const built = buildSelect(d, plan, undefined, false);
  if (shapes.length < MAX_SHAPES_PER_COLUMN) shapes.push({ op: w.op, orderBy: plan.orderBy, limit: plan.limit, sql: built.sql });
  return built;
}

export function compileSelect(d: Dialect, plan: ReadPlan, columns?: string, forWrite = false): Compiled {
  return (columns === undefined && !forWrite ? oneValueSelect(d, plan) : undefined) ?? buildSelect(d, plan, columns, forWrite);
}

function buildSelect(d: Dialect, plan: ReadPlan, columns: string | undefined, forWrite: boolean): Compiled {
  const params: unknown[] = [];
  const bind = binder(d, params);
  let sql = `SELECT ${columns ?? selectList(d, plan.collection)} FROM ${source(d, plan.collection)}${whereClause(d, plan, bind)}${orderClause(d, plan)}`;
  // LIMIT and OFFSET are written as literals: a bound LIMIT made SQLite's primary-key lookup about
  // twice as slow (measured: 12.9 µs vs 6.0 µs). They are safe integers checked by the plan step,
  // never client text, so this is no injection path.
  if (plan.limit !== undefined) sql += ` LIMIT ${intLiteral(plan.limit)}`;
  if (plan.offset) sql += ` OFFSET ${intLiteral(plan.offset)}`;
  if (forWrite && !plan.collection.view) sql += d.lockForWrite;
  return { sql, params };
}

function intLiteral(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return String(n);
}

export function compileCount(d: Dialect, plan: ReadPlan): Compiled {
  const params: unknown[] = [];
  const sql = `SELECT COUNT(*) AS n FROM ${source(d, plan.collection)}${whereClause(d, plan, binder(d, params))}`;
  return { sql, params };
}

/** One INSERT answering the stored row. `values` are JSON-form values by column. */
export function compileInsert(d: Dialect, c: CollectionModel, values: ReadonlyMap<ColumnModel, unknown>): Compiled {
  const params: unknown[] = [];
  const bind = binder(d, params);
  const cols: string[] = [];
  const vals: string[] = [];
  for (const [col, v] of values) {
    cols.push(d.quote(col.sql));
    vals.push(bind(d.encode(col, v)));
  }
  return { sql: `INSERT INTO ${d.quote(c.name)} (${cols.join(', ')}) VALUES (${vals.join(', ')}) RETURNING ${selectList(d, c)}`, params };
}

export function compileUpdateById(d: Dialect, c: CollectionModel, id: string, sets: ReadonlyMap<ColumnModel, unknown>): Compiled {
  const params: unknown[] = [];
  const bind = binder(d, params);
  const assignments = [...sets].map(([col, v]) => `${d.quote(col.sql)} = ${bind(d.encode(col, v))}`);
  return { sql: `UPDATE ${d.quote(c.name)} SET ${assignments.join(', ')} WHERE ${d.quote('id')} = ${bind(id)} RETURNING ${selectList(d, c)}`, params };
}

export function compileDeleteById(d: Dialect, c: CollectionModel, id: string): Compiled {
  const params: unknown[] = [];
  return { sql: `DELETE FROM ${d.quote(c.name)} WHERE ${d.quote('id')} = ${binder(d, params)(id)}`, params };
}
