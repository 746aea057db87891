/**
 * Which live queries can a committed change touch? Answered without running any query and, for
 * the common filters, without looking at unrelated subscriptions (docs/reference/live.md; the peer that re-ran
 * every stream on every write got 50× slower with 100 streams).
 *
 * Per table:
 * - `byColumn`: for a table query whose where has a top-level (AND-ed) `eq`, `in` or `isNull`,
 *   a hash bucket per value. A row can satisfy the where only if its value for that column is
 *   one of the bucket keys, so a change visits only the buckets of its before and after values.
 *   Ten thousand `{ownerId: {eq: X}}` streams cost one Map lookup per change.
 * - `scan`: table queries with nothing indexable; every change to the table visits them.
 * - `views`: view queries reading the table, grouped by view. Their rows are derived, so the
 *   where cannot be tested against the change; an update that leaves every column the view reads
 *   (its selected and join columns) unchanged is skipped, anything else re-runs the view.
 */
import type { CollectionModel } from '../core/model.js';
import { toSnake } from '../core/naming.js';
import type { Change } from '../storage/changes.js';
import type { Row, WhereNode } from '../storage/plan.js';

/** Largest `in` list indexed value by value; longer ones go to `scan`. */
const MAX_IN_KEYS = 64;

/** `Map` key for a column value: SQL equality semantics (booleans are 0/1, absent is NULL). */
export function indexKey(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v;
}

const hashable = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** An indexed column and the keys a matching row's value must be one of. Empty keys: matches nothing. */
export interface IndexChoice {
  readonly column: string;
  readonly keys: readonly unknown[];
}

function conjuncts(node: WhereNode, out: WhereNode[]): WhereNode[] {
  if (node.kind === 'and') for (const item of node.items) conjuncts(item, out);
  else out.push(node);
  return out;
}

/**
 * The most selective top-level conjunct to index on: `id` equality, then any non-null `eq`, then
 * a short `in`, then null equality. null: nothing indexable.
 */
export function chooseIndex(where: WhereNode): IndexChoice | null {
  let best: IndexChoice | null = null;
  let bestRank = 0;
  for (const c of conjuncts(where, [])) {
    if (c.kind !== 'cmp') continue;
    let choice: IndexChoice | null = null;
    let rank = 0;
    if (c.op === 'eq' && hashable(c.value)) {
      choice = { column: c.column.name, keys: [indexKey(c.value)] };
      rank = c.value === null ? 1 : c.column.name === 'id' ? 4 : 3;
    } else if (c.op === 'isNull' && c.value === true) {
      choice = { column: c.column.name, keys: [null] };
      rank = 1;
    } else if (c.op === 'in' && Array.isArray(c.value) && c.value.length <= MAX_IN_KEYS && c.value.every(hashable)) {
      choice = { column: c.column.name, keys: [...new Set(c.value.map(indexKey))] };
      rank = c.value.length === 0 ? 5 : 2; // `in: []`: the query can never be touched.
    }
    if (choice && rank > bestRank) {
      best = choice;
      bestRank = rank;
    }
  }
  return best;
}

/** What the index needs from a query. */
export interface Indexed {
  readonly where: WhereNode;
  readonly collection: CollectionModel;
  readonly choice: IndexChoice | null;
}

interface ViewGroup<Q> {
  /** snake_case names of the table's columns the view reads. */
  readonly reads: ReadonlySet<string>;
  readonly queries: Set<Q>;
}

interface TableEntry<Q> {
  readonly byColumn: Map<string, Map<unknown, Set<Q>>>;
  readonly scan: Set<Q>;
  readonly views: Map<string, ViewGroup<Q>>;
}

/** Columns of `table` a view depends on: selected ones and join keys (SQL names). */
function viewReads(view: CollectionModel, table: string): Set<string> {
  const out = new Set<string>();
  for (const s of view.view?.select ?? []) if (s.table === table) out.add(s.sql);
  for (const j of view.view?.joins ?? []) {
    if (j.left.table === table) out.add(j.left.sql);
    if (j.right.table === table) out.add(j.right.sql);
  }
  return out;
}

const snakeCache = new Map<string, string>();
function snake(name: string): string {
  let s = snakeCache.get(name);
  if (s === undefined) {
    s = toSnake(name);
    if (snakeCache.size < 10_000) snakeCache.set(name, s);
  }
  return s;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** True when an update changed a column in `reads` (SQL names). */
function touches(before: Row, after: Row, reads: ReadonlySet<string>): boolean {
  for (const key of Object.keys(after)) if (reads.has(snake(key)) && !sameValue(before[key], after[key])) return true;
  for (const key of Object.keys(before)) if (!(key in after) && reads.has(snake(key))) return true;
  return false;
}

export class ChangeIndex<Q extends Indexed> {
  #tables = new Map<string, TableEntry<Q>>();

  #entry(table: string): TableEntry<Q> {
    let e = this.#tables.get(table);
    if (!e) {
      e = { byColumn: new Map(), scan: new Set(), views: new Map() };
      this.#tables.set(table, e);
    }
    return e;
  }

  #prune(table: string, e: TableEntry<Q>): void {
    if (e.byColumn.size === 0 && e.scan.size === 0 && e.views.size === 0) this.#tables.delete(table);
  }

  add(q: Q): void {
    const c = q.collection;
    if (c.kind === 'view') {
      for (const t of c.reads) {
        const views = this.#entry(t).views;
        let g = views.get(c.name);
        if (!g) views.set(c.name, (g = { reads: viewReads(c, t), queries: new Set() }));
        g.queries.add(q);
      }
      return;
    }
    const e = this.#entry(c.name);
    if (!q.choice) {
      e.scan.add(q);
      return;
    }
    let buckets = e.byColumn.get(q.choice.column);
    if (!buckets) e.byColumn.set(q.choice.column, (buckets = new Map()));
    for (const k of q.choice.keys) {
      let set = buckets.get(k);
      if (!set) buckets.set(k, (set = new Set()));
      set.add(q);
    }
  }

  delete(q: Q): void {
    const c = q.collection;
    if (c.kind === 'view') {
      for (const t of c.reads) {
        const e = this.#tables.get(t);
        const g = e?.views.get(c.name);
        if (!e || !g) continue;
        g.queries.delete(q);
        if (g.queries.size === 0) e.views.delete(c.name);
        this.#prune(t, e);
      }
      return;
    }
    const e = this.#tables.get(c.name);
    if (!e) return;
    if (!q.choice) e.scan.delete(q);
    else {
      const buckets = e.byColumn.get(q.choice.column);
      for (const k of q.choice.keys) {
        const set = buckets?.get(k);
        if (!set) continue;
        set.delete(q);
        if (set.size === 0) buckets!.delete(k);
      }
      if (buckets?.size === 0) e.byColumn.delete(q.choice.column);
    }
    this.#prune(c.name, e);
  }

  /**
   * Calls `table(q)` for every table query that may match the change (the caller still tests the
   * where; a query may be offered twice) and `view(q)` for every view query it touches.
   */
  candidates(change: Change, table: (q: Q) => void, view: (q: Q) => void): void {
    const e = this.#tables.get(change.table);
    if (!e) return;
    const { before, after } = change;
    for (const [column, buckets] of e.byColumn) {
      const b = before ? indexKey(before[column]) : undefined;
      const a = after ? indexKey(after[column]) : undefined;
      if (before) buckets.get(b)?.forEach(table);
      if (after && (!before || a !== b)) buckets.get(a)?.forEach(table);
    }
    e.scan.forEach(table);
    for (const g of e.views.values()) {
      if (change.op === 'update' && before && after && !touches(before, after, g.reads)) continue;
      g.queries.forEach(view);
    }
  }

  /** Tables with at least one registered query (tests, metrics). */
  get tableCount(): number {
    return this.#tables.size;
  }
}
