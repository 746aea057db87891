/**
 * The where tree evaluated in memory, with exactly the semantics of the SQL the compiler emits
 * (storage/compiler.ts on SQLite). The live engine uses it to decide whether a committed change
 * can touch a subscription; a disagreement with SQL would mean a missed push, so every branch
 * mirrors one branch of `compileCmp`.
 *
 * SQL's three-valued logic: a comparison with NULL is "unknown". The compiler wraps every NOT's
 * operand in COALESCE(…, false) and WHERE treats unknown as false, and AND/OR are monotone, so
 * mapping unknown to false at every leaf gives the same answer as SQL at the top.
 */
import type { Row, WhereNode } from '../storage/plan.js';

/**
 * A value as SQLite holds it: booleans are 0/1 integers (sqliteDialect.encode), a missing key
 * is NULL.
 */
export function sqlValue(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v;
}

/**
 * SQLite's BINARY collation compares UTF-8 bytes, which is code-point order. JavaScript's `<`
 * compares UTF-16 code units; the two disagree only when a surrogate (a code point above
 * U+FFFF) meets a unit in U+E000–U+FFFF, so only the first differing unit needs fixing.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Orders two non-null SQL values; SQLite ranks numbers before text (its storage-class order),
 * which only matters if a value of the wrong kind slipped through normalization.
 */
function compare(a: unknown, b: unknown): number {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === 'number' && tb === 'number') return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  if (ta === 'string' && tb === 'string') return compareText(a as string, b as string);
  if (ta === 'number') return -1;
  if (tb === 'number') return 1;
  return compareText(String(a), String(b));
}

/**
 * SQL `=` between two non-null values already passed through sqlValue. Filter values are
 * normalized to the column's kind (pipeline/plan/values.ts), so the cross-type conversions of
 * SQLite's affinity rules never come into play.
 */
function sqlEquals(a: unknown, b: unknown): boolean {
  return a === b;
}

function inList(v: unknown, items: readonly unknown[]): boolean {
  for (const item of items) if (sqlEquals(v, sqlValue(item))) return true;
  return false;
}

/** `{has: item}`: the compiler's `EXISTS (SELECT 1 FROM json_each(col) WHERE value = ?)`. */
function listHas(list: unknown, item: unknown): boolean {
  if (!Array.isArray(list)) return false;
  const want = sqlValue(item);
  for (const x of list) {
    const v = sqlValue(x);
    if (v !== null && sqlEquals(v, want)) return true;
  }
  return false;
}

function cmp(op: string, raw: unknown, value: unknown): boolean {
  const v = sqlValue(raw);
  switch (op) {
    case 'eq':
      // `{eq: null}` is `IS NULL` (docs/reference/data.md); `= x` against NULL is unknown, hence false.
      return value === null ? v === null : v !== null && sqlEquals(v, sqlValue(value));
    case 'ne':
      // docs/reference/where.md: `(col IS NULL OR col <> x)` — null is a value that differs from x.
      return value === null ? v !== null : v === null || !sqlEquals(v, sqlValue(value));
    case 'gt':
      return v !== null && value !== null && compare(v, sqlValue(value)) > 0;
    case 'gte':
      return v !== null && value !== null && compare(v, sqlValue(value)) >= 0;
    case 'lt':
      return v !== null && value !== null && compare(v, sqlValue(value)) < 0;
    case 'lte':
      return v !== null && value !== null && compare(v, sqlValue(value)) <= 0;
    case 'in': {
      // `in: []` compiles to 1=0; `NULL IN (…)` is unknown.
      const items = value as readonly unknown[];
      return items.length > 0 && v !== null && inList(v, items);
    }
    case 'nin': {
      // `nin: []` compiles to 1=1; otherwise `(col IS NULL OR col NOT IN (…))` (docs/reference/where.md).
      const items = value as readonly unknown[];
      return items.length === 0 || v === null || !inList(v, items);
    }
    // As the SQL (instr/substr): case-sensitive, literal, NULL never matches (docs/reference/data.md).
    case 'contains':
      return typeof v === 'string' && v.includes(value as string);
    case 'startsWith':
      return typeof v === 'string' && v.startsWith(value as string);
    case 'endsWith':
      return typeof v === 'string' && v.endsWith(value as string);
    case 'isNull':
      return value ? v === null : v !== null;
    case 'has':
      return listHas(raw, value);
    default:
      throw new Error(`unknown operator ${op}`);
  }
}

/** True when `row` satisfies `node`, exactly as the compiled WHERE clause would decide. */
export function matches(node: WhereNode, row: Row): boolean {
  switch (node.kind) {
    case 'and':
      for (const item of node.items) if (!matches(item, row)) return false;
      return true;
    case 'or':
      for (const item of node.items) if (matches(item, row)) return true;
      return false;
    case 'not':
      return !matches(node.item, row);
    case 'cmp':
      return cmp(node.op, row[node.column.name], node.value);
  }
}
