/**
 * The where grammar of SPEC §4 → a WhereNode tree. Column names are checked against the schema
 * before any SQL exists; values are normalized by column kind; depth and size are bounded so a
 * hostile filter costs little.
 */
import { badRequest } from '../../core/errors.js';
import type { CollectionModel, ColumnModel } from '../../core/model.js';
import type { CompareOp, WhereNode } from '../../storage/plan.js';
import { normalizeItem, normalizeValue } from './values.js';
import { isPlainObject } from './body.js';

const MAX_DEPTH = 16;
const MAX_NODES = 512;
const MAX_IN = 1000;

const TEXT_KINDS = new Set(['text', 'email', 'id', 'photo']);
const ORDERED_KINDS = new Set(['text', 'email', 'id', 'photo', 'integer', 'real', 'timestamp', 'createdAt', 'updatedAt', 'updatedWhen']);
const OPS = new Set<CompareOp>(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'isNull', 'has']);

interface Budget {
  nodes: number;
}

function condition(col: ColumnModel, op: CompareOp, value: unknown, path: string): WhereNode {
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
    if (value.length > MAX_IN) throw badRequest(path, `${op} takes at most ${MAX_IN} values`);
    return { kind: 'cmp', column: col, op, value: value.map((v, i) => normalizeValue(col, v, `${path}/${i}`)) };
  }
  if (op === 'contains' || op === 'startsWith' || op === 'endsWith') {
    if (!TEXT_KINDS.has(kind)) throw badRequest(path, `${op} applies to text columns`);
    if (typeof value !== 'string') throw badRequest(path, 'must be a string');
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
    if (++budget.nodes > MAX_NODES) throw badRequest(path, 'the filter is too large');
    items.push(condition(col, op as CompareOp, cond[op], `${path}/${op}`));
  }
  return items.length === 1 ? items[0]! : { kind: 'and', items };
}

function parse(c: CollectionModel, where: unknown, path: string, depth: number, budget: Budget): WhereNode {
  if (depth > MAX_DEPTH) throw badRequest(path, 'the filter is nested too deeply');
  if (!isPlainObject(where)) throw badRequest(path, 'where must be an object');
  const items: WhereNode[] = [];
  for (const [key, value] of Object.entries(where)) {
    const p = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (++budget.nodes > MAX_NODES) throw badRequest(path, 'the filter is too large');
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) throw badRequest(p, `${key} takes an array of filters`);
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
  return parse(c, where, path, 0, { nodes: 0 });
}
