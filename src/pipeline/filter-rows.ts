/**
 * Step 5: the row filter, one batch per page (docs/reference/rules-and-hooks.md). If any returned row fails
 * the row rule, the whole request is 403. Skipped when the collection has no row rule or
 * declares requiresPerRowCheck: false. Writes check their rows inside the transaction instead.
 */
import { forbidden } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Jwt } from '../define/types.js';
import type { Row } from '../storage/plan.js';

/** A promise only when a row rule answers one: unfiltered reads (most) pay no microtask here. */
export function filterRows(c: CollectionModel, jwt: Jwt | null, rows: readonly Row[]): void | Promise<void> {
  if (!c.rowFiltered || rows.length === 0) return;
  const canView = c.rowRules!.canView!;
  let pending: Promise<boolean>[] | undefined;
  for (const row of rows) {
    const v = canView(jwt, row);
    if (v instanceof Promise) (pending ??= []).push(v);
    else if (v !== true) throw forbidden();
  }
  if (pending)
    return Promise.all(pending).then((vs) => {
      if (vs.some((v) => v !== true)) throw forbidden();
    });
}
