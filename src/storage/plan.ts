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
   * `eq`/`ne` with `null` value: null-aware (SPEC §4, §13.5). `in`/`nin`: value is an array.
   * `isNull`: value is a boolean. `has`: value is one list item.
   */
  | { readonly kind: 'cmp'; readonly column: ColumnModel; readonly op: CompareOp; readonly value: unknown };

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
