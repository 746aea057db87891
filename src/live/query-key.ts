/**
 * A canonical text key for a live query, so identical subscriptions share one query, one run
 * and one last result (docs/reference/live.md; the 200-clients-on-one-query case). Two plans get the same key
 * exactly when they are bound to answer the same data:
 *
 * - AND/OR are commutative and idempotent, so their operands are flattened, deduplicated and
 *   sorted; a one-operand AND/OR is its operand. `{a, b}` and `{b, a}` share a key.
 * - `in`/`nin` lists are sets.
 * - count ignores order, limit and offset; offset 0 equals no offset.
 */
import type { ReadPlan, WhereNode } from '../storage/plan.js';
import type { LiveQuery } from './types.js';

function sortedUnique(keys: string[]): string[] {
  return [...new Set(keys)].sort();
}

/** Operand keys of an AND (or OR), nested same-kind nodes flattened. */
function operandKeys(kind: 'and' | 'or', items: readonly WhereNode[], out: string[]): string[] {
  for (const item of items) {
    if (item.kind === kind) operandKeys(kind, item.items, out);
    else out.push(whereKey(item));
  }
  return out;
}

/** Canonical JSON text of a where tree (column names, never SQL). */
export function whereKey(node: WhereNode): string {
  switch (node.kind) {
    case 'and':
    case 'or': {
      const keys = sortedUnique(operandKeys(node.kind, node.items, []));
      if (keys.length === 1) return keys[0]!;
      return `["${node.kind}"${keys.length ? ',' : ''}${keys.join(',')}]`;
    }
    case 'not':
      return `["not",${whereKey(node.item)}]`;
    case 'cmp': {
      const value = (node.op === 'in' || node.op === 'nin') && Array.isArray(node.value) ? `[${sortedUnique(node.value.map((v) => JSON.stringify(v))).join(',')}]` : JSON.stringify(node.value ?? null);
      return `["${node.op}",${JSON.stringify(node.column.name)},${value}]`;
    }
  }
}

function orderKey(plan: ReadPlan): string {
  return plan.orderBy.map((t) => `${t.column.name} ${t.direction}`).join(',');
}

/** The sharing key of a live query. */
export function queryKey(q: LiveQuery): string {
  const p = q.plan;
  const head = `${p.collection.name}|${q.kind}|${whereKey(p.where)}`;
  if (q.kind === 'count') return head;
  return `${head}|${orderKey(p)}|${p.limit ?? ''}|${p.offset ?? 0}`;
}
