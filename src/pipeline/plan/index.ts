/**
 * Step 3, operations: builds the structured query from the payload without running it. All
 * body-shape errors are found here, after the rules, so a denied caller gets 403 even with a
 * malformed body (docs/reference/rules-and-hooks.md).
 */
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../core/model.js';
import { MATCH_ALL, readPlan, type OrderTerm, type ReadPlan, type WhereNode } from '../../storage/plan.js';
import type { Operation } from '../operation.js';
import { allowKeys, isPlainObject, optionalInt, requireArray } from './body.js';
import { checkCreateObject, checkUpdates, type UpdatePlan } from './objects.js';
import { parseWhere } from './where.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const MAX_OFFSET = 1_000_000_000;

export type Plan =
  | { readonly kind: 'get' | 'list' | 'count'; readonly read: ReadPlan }
  | { readonly kind: 'create'; readonly objects: Record<string, unknown>[]; readonly many: boolean }
  | { readonly kind: 'update'; readonly read: ReadPlan; readonly updates: UpdatePlan[]; readonly many: boolean }
  | { readonly kind: 'delete'; readonly read: ReadPlan; readonly many: boolean }
  | {
      readonly kind: 'custom';
      readonly name: string;
      readonly where: unknown;
      /** The parsed `where`, for the before-image check of docs/reference/rules-and-hooks.md. */
      readonly read: ReadPlan;
      readonly updates: unknown;
      readonly many: boolean;
      readonly limit: number | undefined;
    };

/** A collection's default order as frozen terms, built once: most reads use it (and the compiler caches its SQL by this array). */
const defaultTerms = new WeakMap<CollectionModel, readonly OrderTerm[]>();

function orderBy(c: CollectionModel, raw: unknown): readonly OrderTerm[] {
  if (raw === undefined) {
    let terms = defaultTerms.get(c);
    if (!terms) defaultTerms.set(c, (terms = Object.freeze(c.defaultOrder.map((o) => Object.freeze({ column: c.columns.get(o.column)!, direction: o.direction })))));
    return terms;
  }
  if (!Array.isArray(raw)) throw badRequest('/order_by', 'must be an array of {column, direction}');
  if (raw.length > 16) throw badRequest('/order_by', 'too many sort terms');
  return raw.map((t, i) => {
    const p = `/order_by/${i}`;
    if (!isPlainObject(t)) throw badRequest(p, 'must be {column, direction}');
    for (const k of Object.keys(t)) if (k !== 'column' && k !== 'direction') throw badRequest(`${p}/${k}`, `unknown field "${k}"`);
    const col = typeof t.column === 'string' ? c.columns.get(t.column) : undefined;
    // Typed before it is shown: String() of {"toString":1} throws (a 500, issue #26).
    if (!col) throw badRequest(`${p}/column`, typeof t.column === 'string' ? `unknown column "${t.column}"` : 'must be a column name');
    if (col.hidden || col.spec.kind === 'json' || col.spec.kind === 'list') throw badRequest(`${p}/column`, `${col.name} cannot be sorted`);
    const direction = t.direction ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw badRequest(`${p}/direction`, 'must be "asc" or "desc"');
    return { column: col, direction };
  });
}

function whereOf(c: CollectionModel, body: Record<string, unknown>, required: boolean): WhereNode {
  if (body.where === undefined) {
    if (required) throw badRequest('/where', '"where" is required ({} means every row)');
    return MATCH_ALL;
  }
  return parseWhere(c, body.where);
}

/**
 * docs/reference/auth.md: on auth tables `email` changes only through /auth/change-email + confirmEmailChange,
 * so an address nobody confirmed can never become a verified one through /db (update, update
 * many, and the updates a custom operation is handed).
 */
function refuseEmailChange(c: CollectionModel, updates: unknown): void {
  if (!c.auth || !Array.isArray(updates)) return;
  const i = updates.findIndex((u) => isPlainObject(u) && u.column === 'email');
  if (i >= 0) throw badRequest(`/updates/${i}/column`, 'email is changed through /auth/change-email');
}

function read(c: CollectionModel, where: WhereNode, order: readonly OrderTerm[], limit: number | undefined, offset?: number): ReadPlan {
  return readPlan(c, where, { orderBy: order, limit, offset });
}

export function planOperation(o: Operation): Plan {
  const c = o.collection;
  const b = o.body;
  switch (o.op) {
    case 'get':
    case 'streamOne':
      allowKeys(b, ['table', 'where', 'expand']);
      if (b.expand !== undefined && !(Array.isArray(b.expand) && b.expand.length === 0)) throw badRequest('/expand', 'only [] is supported');
      return { kind: 'get', read: read(c, whereOf(c, b, true), orderBy(c, undefined), 1) };
    case 'list':
    case 'streamList': {
      allowKeys(b, ['table', 'where', 'limit', 'offset', 'order_by']);
      const limit = optionalInt(b, 'limit', 0, MAX_LIMIT) ?? DEFAULT_LIMIT;
      const offset = optionalInt(b, 'offset', 0, MAX_OFFSET) ?? 0;
      return { kind: 'list', read: read(c, whereOf(c, b, false), orderBy(c, b.order_by), limit, offset) };
    }
    case 'count':
    case 'streamCount':
      allowKeys(b, ['table', 'where']);
      return { kind: 'count', read: read(c, whereOf(c, b, false), [], undefined) };
    case 'create':
      allowKeys(b, ['table', 'object']);
      if (b.object === undefined) throw badRequest('/object', '"object" is required');
      return { kind: 'create', objects: [checkCreateObject(c, b.object, '/object')], many: false };
    case 'createMany': {
      allowKeys(b, ['table', 'objects']);
      const objects = requireArray(b, 'objects', 1, 1000).map((obj, i) => checkCreateObject(c, obj, `/objects/${i}`));
      return { kind: 'create', objects, many: true };
    }
    case 'update':
    case 'updateMany': {
      const many = o.op === 'updateMany';
      allowKeys(b, many ? ['table', 'where', 'updates', 'limit'] : ['table', 'where', 'updates']);
      const where = whereOf(c, b, true);
      refuseEmailChange(c, b.updates);
      const updates = checkUpdates(c, b.updates);
      const limit = many ? optionalInt(b, 'limit', 0, Number.MAX_SAFE_INTEGER) : 1;
      return { kind: 'update', read: read(c, where, orderBy(c, undefined), limit), updates, many };
    }
    case 'delete':
    case 'deleteMany': {
      const many = o.op === 'deleteMany';
      allowKeys(b, many ? ['table', 'where', 'limit'] : ['table', 'where']);
      const where = whereOf(c, b, true);
      const limit = many ? optionalInt(b, 'limit', 0, Number.MAX_SAFE_INTEGER) : 1;
      return { kind: 'delete', read: read(c, where, orderBy(c, undefined), limit), many };
    }
    case 'custom':
    case 'customMany': {
      const many = o.op === 'customMany';
      allowKeys(b, ['table', 'where', 'updates', 'limit']);
      const where = b.where;
      if (where === undefined) throw badRequest('/where', '"where" is required ({} means every row)');
      const node = parseWhere(c, where); // checked here so handlers get a valid filter
      if (b.updates !== undefined && !Array.isArray(b.updates)) throw badRequest('/updates', 'must be an array');
      refuseEmailChange(c, b.updates);
      const limit = optionalInt(b, 'limit', 0, Number.MAX_SAFE_INTEGER);
      return { kind: 'custom', name: o.custom!, where, read: read(c, node, orderBy(c, undefined), many ? limit : 1), updates: b.updates, many, limit };
    }
  }
}
