/** The read side of step 4, shared by the data routes and the live engine's re-runs. */
import type { Runtime } from '../../core/runtime.js';
import type { ReadPlan, Row } from '../../storage/plan.js';
import { countRows, selectRows } from '../../storage/rows.js';

/**
 * get: the first row (or null); list: {items, total}; count: a number. Not async for a get or a
 * count: the statement's own promise is the only one they pay for.
 */
export function readData(rt: Runtime, kind: 'get' | 'list' | 'count', read: ReadPlan): Promise<unknown> {
  const d = rt.driver.dialect;
  if (kind === 'count') return countRows(rt.driver, d, read);
  if (kind === 'get') return selectRows(rt.driver, d, read).then(firstOrNull);
  return readPage(rt, read);
}

const firstOrNull = (rows: readonly Row[]): Row | null => rows[0] ?? null;

async function readPage(rt: Runtime, read: ReadPlan): Promise<{ items: Row[]; total: number }> {
  const d = rt.driver.dialect;
  const { limit = 0, offset = 0 } = read;
  const items = limit === 0 ? [] : await selectRows(rt.driver, d, read);
  // A page that is not full (and not empty past the end) already tells the total.
  const total = items.length < limit && (items.length > 0 || offset === 0) ? offset + items.length : await countRows(rt.driver, d, read);
  return { items, total };
}

/** The rows of a read's data that the row filter must see. */
export function rowsOf(kind: 'get' | 'list' | 'count', data: unknown): readonly Row[] {
  if (kind === 'count' || data === null) return [];
  if (kind === 'get') return [data as Row];
  return (data as { items: Row[] }).items;
}
