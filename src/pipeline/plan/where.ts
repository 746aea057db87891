/**
 * The where grammar of docs/reference/data.md → a WhereNode tree. Column names are checked against the schema
 * before any SQL exists; values are normalized by column kind; depth and size are bounded so a
 * hostile filter costs little (docs/reference/data.md "Bounds"): every check is made before the part it guards
 * is walked, so refusing a huge filter costs O(what was read until the bound), never more.
 */
import { badRequest } from '../../core/errors.js';
import type { CollectionModel, ColumnModel } from '../../core/model.js';
import type { CompareOp, WhereNode } from '../../storage/plan.js';
import { normalizeItem, normalizeValue } from './values.js';
import { isPlainObject } from './body.js';

/** Levels of where objects, the top one included (docs/reference/data.md). */
export const MAX_DEPTH = 16;
/** Values in all: every operand, every in/nin entry and every and/or item, empty ones too (docs/reference/data.md). */
export const MAX_VALUES = 1000;
/** contains/startsWith/endsWith operands, in characters (docs/reference/data.md). */
export const MAX_PATTERN = 256;

const TEXT_KINDS = new Set(['text', 'email', 'id', 'photo']);
const ORDERED_KINDS = new Set(['text', 'email', 'id', 'photo', 'integer', 'real', 'timestamp', 'createdAt', 'updatedAt', 'updatedWhen']);
const OPS = new Set<CompareOp>(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'isNull', 'has']);

interface Budget {
  values: number;
}

/** Counts `n` more values; 400 at the path that crossed the bound. */
function spend(budget: Budget, n: number, path: string): void {
  budget.values += n;
  if (budget.values > MAX_VALUES) throw badRequest(path, `a filter holds at most ${MAX_VALUES} values in all`);
}

/** Characters as docs/reference/data.md counts them (code points); the cheap UTF-16 length decides almost always. */
function tooLong(s: string): boolean {
  return s.length > MAX_PATTERN && (s.length > 2 * MAX_PATTERN || [...s].length > MAX_PATTERN);
}

function condition(col: ColumnModel, op: CompareOp, value: unknown, path: string, budget: Budget): WhereNode {
  const kind = col.spec.kind;
  if (op === 'isNull') {
    if (typeof value !== 'boolean') throw badRequest(path, 'isNull takes true or false');
    return { kind: 'cmp', column: col, op, value };
  }
  if (kind === 'json') throw badRequest(path, `${col.name} can only be filtered with isNull`);
  if (op === 'has') {
    if (kind !== 'list') throw badRequest(path, 'has applies to list columns');
    return { kind: 'cmp', column: col, op, value: normalizeItem(col, value, path) };
  }
  if (kind === 'list') throw badRequest(path, `${col.name} is a list: use has or isNull`);
  if ((op === 'eq' || op === 'ne') && value === null) return { kind: 'cmp', column: col, op, value: null };
  if (op === 'in' || op === 'nin') {
    if (!Array.isArray(value)) throw badRequest(path, `${op} takes an array`);
    spend(budget, Math.max(0, value.length - 1), path); // the operator was already counted as one
    return { kind: 'cmp', column: col, op, value: value.map((v, i) => normalizeValue(col, v, `${path}/${i}`)) };
  }
  if (op === 'contains' || op === 'startsWith' || op === 'endsWith') {
    if (!TEXT_KINDS.has(kind)) throw badRequest(path, `${op} applies to text columns`);
    if (typeof value !== 'string') throw badRequest(path, 'must be a string');
    if (tooLong(value)) throw badRequest(path, `${op} takes at most ${MAX_PATTERN} characters`);
    return { kind: 'cmp', column: col, op, value };
  }
  if (op !== 'eq' && op !== 'ne' && !ORDERED_KINDS.has(kind)) throw badRequest(path, `${op} does not apply to ${col.name}`);
  // Filters take the same value forms as writes; emails compare in their stored (lowercase) form.
  return { kind: 'cmp', column: col, op, value: normalizeValue(col, value, path) };
}

function columnFilter(c: CollectionModel, name: string, cond: unknown, path: string, budget: Budget): WhereNode {
  const col = c.columns.get(name);
  if (!col) throw badRequest(path, `unknown column "${name}"`);
  if (col.hidden) throw badRequest(path, `${name} cannot be filtered`);
  if (!isPlainObject(cond)) throw badRequest(path, 'a condition is an object such as {"eq": value}');
  const ops = Object.keys(cond);
  if (ops.length === 0) throw badRequest(path, 'a condition needs an operator');
  const items: WhereNode[] = [];
  for (const op of ops) {
    if (!OPS.has(op as CompareOp)) throw badRequest(`${path}/${op}`, `unknown operator "${op}"`);
    spend(budget, 1, `${path}/${op}`);
    items.push(condition(col, op as CompareOp, cond[op], `${path}/${op}`, budget));
  }
  return items.length === 1 ? items[0]! : { kind: 'and', items };
}

/** A key as a JSON Pointer token (RFC 6901); the common key has nothing to escape and is not scanned twice. */
function pointerToken(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

function parse(c: CollectionModel, where: unknown, path: string, depth: number, budget: Budget): WhereNode {
  if (depth > MAX_DEPTH) throw badRequest(path, `a filter nests at most ${MAX_DEPTH} levels`);
  if (!isPlainObject(where)) throw badRequest(path, 'where must be an object');
  const items: WhereNode[] = [];
  for (const [key, value] of Object.entries(where)) {
    const p = `${path}/${pointerToken(key)}`;
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) throw badRequest(p, `${key} takes an array of filters`);
      spend(budget, value.length, p);
      items.push({ kind: key, items: value.map((w, i) => parse(c, w, `${p}/${i}`, depth + 1, budget)) });
    } else if (key === 'not') {
      items.push({ kind: 'not', item: parse(c, value, p, depth + 1, budget) });
    } else {
      items.push(columnFilter(c, key, value, p, budget));
    }
  }
  return items.length === 1 ? items[0]! : { kind: 'and', items };
}

/** `{}` means every row. */
export function parseWhere(c: CollectionModel, where: unknown, path = '/where'): WhereNode {
  return parse(c, where, path, 1, { values: 0 });
}
