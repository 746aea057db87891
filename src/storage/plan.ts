/**
 * Query plans: frozen, dialect-neutral values built by the pipeline's operations step and turned
 * into SQL by the compiler (storage/compiler.ts) or evaluated in memory by the live engine.
 * Values are in their JSON form (timestamps as ISO strings, booleans as booleans), already
 * checked against the column's kind.
 */
import type { CollectionModel, ColumnModel } from '../core/model.js';

/** A row as the driver returns it, before decoding (here so dialect.ts and driver.ts need not import each other). */
export type RawRow = Record<string, unknown>;

export type CompareOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin' | 'contains' | 'startsWith' | 'endsWith' | 'isNull' | 'has';

export type WhereNode =
  | { readonly kind: 'and'; readonly items: readonly WhereNode[] }
  | { readonly kind: 'or'; readonly items: readonly WhereNode[] }
  | { readonly kind: 'not'; readonly item: WhereNode }
  /**
   * `eq`/`ne` with `null` value: null-aware (docs/reference/data.md, docs/reference/where.md). `in`/`nin`: value is an array.
   * `isNull`: value is a boolean. `has`: value is one list item.
   */
  | { readonly kind: 'cmp'; readonly column: ColumnModel; readonly op: CompareOp; readonly value: unknown };

const NO_ORDER: readonly OrderTerm[] = Object.freeze([]);

export const MATCH_ALL: WhereNode = Object.freeze({ kind: 'and', items: Object.freeze([]) });

export interface OrderTerm {
  readonly column: ColumnModel;
  readonly direction: 'asc' | 'desc';
}

export interface ReadPlan {
  readonly collection: CollectionModel;
  readonly where: WhereNode;
  /** Empty array: no ORDER BY. */
  readonly orderBy: readonly OrderTerm[];
  readonly limit: number | undefined;
  readonly offset: number | undefined;
}

/** A row as clients see it: camelCase keys, JSON values, hidden columns removed. */
export type Row = Record<string, unknown> & { id: string };

/**
 * Plans come only from these factories (issue #10 item 5): every plan is frozen, has every field,
 * and its values have already been normalized by the plan stage (pipeline/plan/values.ts).
 */
export function readPlan(collection: CollectionModel, where: WhereNode = MATCH_ALL, options: { orderBy?: readonly OrderTerm[]; limit?: number; offset?: number } = {}): ReadPlan {
  // A frozen order is kept as is (the planner's cached default order): it cannot change under the plan.
  const o = options.orderBy ?? NO_ORDER;
  return Object.freeze({ collection, where, orderBy: Object.isFrozen(o) ? o : Object.freeze([...o]), limit: options.limit, offset: options.offset });
}

export const allOf = (items: readonly WhereNode[]): WhereNode => Object.freeze({ kind: 'and', items: Object.freeze([...items]) });
export const anyOf = (items: readonly WhereNode[]): WhereNode => Object.freeze({ kind: 'or', items: Object.freeze([...items]) });
export const negate = (item: WhereNode): WhereNode => Object.freeze({ kind: 'not', item });

/** One comparison node (`value` already normalized for `column`). */
export function cmp(column: ColumnModel, op: CompareOp, value: unknown): WhereNode {
  return Object.freeze({ kind: 'cmp', column, op, value });
}

/** At most one row whose `column` equals `value` (lookups by id or by a unique column). */
export function byColumnPlan(collection: CollectionModel, column: string, value: unknown): ReadPlan {
  const col = collection.columns.get(column);
  if (!col) throw new Error(`unknown column ${collection.name}.${column}`);
  return readPlan(collection, cmp(col, 'eq', value), { limit: 1 });
}

/** The same rows counted: order, limit and offset dropped. */
export function countPlan(plan: ReadPlan): ReadPlan {
  return readPlan(plan.collection, plan.where);
}

/** The collection's default order as order terms. */
export function defaultOrder(collection: CollectionModel): OrderTerm[] {
  return collection.defaultOrder.map((o) => Object.freeze({ column: collection.columns.get(o.column)!, direction: o.direction ?? 'asc' }));
}
