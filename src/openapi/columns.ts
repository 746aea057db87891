/**
 * What a client may do with each column, by kind: which `where` operators apply (docs/reference/data.md), which
 * columns a create object and an update may name, and which may be sorted. The OpenAPI document
 * and the generated client both read these, so the two never disagree; `columns.test.ts` checks
 * every answer against the server's own where parser and plan builder.
 */
import type { ColumnModel } from '../core/model.js';
import type { ColumnKind, ScalarKind } from '../define/columns.js';
import type { CompareOp } from '../storage/plan.js';

/** The where operators: the plan's own list, so the document cannot name one the server lacks. */
export type Operator = CompareOp;

/**
 * The condition families of docs/reference/data.md. `text` covers every string-valued kind (text, email, id,
 * photo); the four `list.*` families differ only in their item type.
 */
export type ConditionFamily = 'text' | 'integer' | 'real' | 'boolean' | 'timestamp' | 'json' | `list.${ScalarKind}`;

const TEXT_OPS: readonly Operator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'isNull'];
const ORDERED_OPS: readonly Operator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'isNull'];
const BOOLEAN_OPS: readonly Operator[] = ['eq', 'ne', 'in', 'nin', 'isNull'];
const LIST_OPS: readonly Operator[] = ['has', 'isNull'];
const JSON_OPS: readonly Operator[] = ['isNull'];

export const OPERATORS: Readonly<Record<ConditionFamily, readonly Operator[]>> = Object.freeze({
  text: TEXT_OPS,
  integer: ORDERED_OPS,
  real: ORDERED_OPS,
  boolean: BOOLEAN_OPS,
  timestamp: ORDERED_OPS,
  json: JSON_OPS,
  'list.text': LIST_OPS,
  'list.integer': LIST_OPS,
  'list.real': LIST_OPS,
  'list.boolean': LIST_OPS,
});

export const CONDITION_FAMILIES = Object.keys(OPERATORS) as ConditionFamily[];

const FAMILY_OF_KIND: Readonly<Record<Exclude<ColumnKind, 'list' | 'password'>, ConditionFamily>> = {
  id: 'text',
  text: 'text',
  email: 'text',
  photo: 'text',
  integer: 'integer',
  real: 'real',
  boolean: 'boolean',
  isVerified: 'boolean',
  timestamp: 'timestamp',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
  updatedWhen: 'timestamp',
  json: 'json',
};

/** The condition family of a column; `undefined` for a column that can never be filtered (password). */
export function conditionFamily(col: ColumnModel): ConditionFamily | undefined {
  const kind = col.spec.kind;
  if (col.hidden || kind === 'password') return undefined;
  if (kind === 'list') return `list.${col.spec.of ?? 'text'}`;
  return FAMILY_OF_KIND[kind];
}

export function operatorsFor(col: ColumnModel): readonly Operator[] {
  const family = conditionFamily(col);
  return family ? OPERATORS[family] : [];
}

/** Columns a client sees in a row: all but hidden ones (password, docs/reference/columns.md). */
export const isVisible = (col: ColumnModel): boolean => !col.hidden;

/** Columns a create object may hold: not `id`, not server-managed, not hidden. */
export const isCreatable = (col: ColumnModel): boolean => !col.hidden && !col.managed && col.spec.kind !== 'id';

/** Required on create: neither nullable nor defaulted (docs/reference/columns.md). */
export const isRequiredOnCreate = (col: ColumnModel): boolean => isCreatable(col) && !col.spec.nullable && !col.spec.hasDefault && col.spec.filledBy !== 'hook';

/** Columns an update may set; managed columns are ignored by the server, so they are not offered. */
export const isUpdatable = isCreatable;

/** Columns `order_by` accepts: not hidden, not json, not list (the plan builder refuses those). */
export const isSortable = (col: ColumnModel): boolean => !col.hidden && col.spec.kind !== 'json' && col.spec.kind !== 'list';

export const isNumeric = (col: ColumnModel): boolean => col.spec.kind === 'integer' || col.spec.kind === 'real';

export const isTimestamp = (col: ColumnModel): boolean => col.spec.kind === 'timestamp' || col.spec.kind === 'createdAt' || col.spec.kind === 'updatedAt' || col.spec.kind === 'updatedWhen';
