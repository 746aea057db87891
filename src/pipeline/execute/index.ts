/**
 * Step 4 of a write, execution: mutations go through the serialized writer (execute/writes.ts);
 * custom operations call the project's handler as trusted code. Reads (get, list, count) do not
 * come here: the pipeline runs them straight on the read connection (execute/reads.ts), without
 * a Scope or an async frame (docs/lifecycle.md, "What each stage costs").
 */
import { ApiError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { Row } from '../../storage/plan.js';
import type { Operation } from '../operation.js';
import type { Plan } from '../plan/index.js';
import type { Scope } from '../scope.js';
import { filterRows } from '../filter-rows.js';
import { selectRows } from '../../storage/rows.js';
import { createRows, deleteRows, updateRows } from './writes.js';

export interface Executed {
  /** The answer's `data`; undefined for 204. */
  readonly data: unknown;
  /** Rows the row filter must see (reads only; writes checked theirs in the transaction). */
  readonly rows: readonly Row[];
  /** Step 6 work (after-success hooks). */
  readonly after?: () => Promise<void>;
  readonly noContent?: boolean;
}

const NONE: readonly Row[] = Object.freeze([]);

/** A write's plan: what execute() takes. */
export type WritePlan = Exclude<Plan, { kind: 'get' | 'list' | 'count' }>;

export async function execute(rt: Runtime, o: Operation, plan: WritePlan, scope: Scope): Promise<Executed> {
  const options = { scope, trusted: false };
  switch (plan.kind) {
    case 'create': {
      const r = await createRows(o.collection, plan.objects, options, plan.many);
      return { data: plan.many ? r.value : r.value[0], rows: NONE, after: r.after };
    }
    case 'update': {
      const r = await updateRows(o.collection, plan.read, plan.updates, options, plan.many);
      return { data: plan.many ? r.value : r.value[0], rows: NONE, after: r.after };
    }
    case 'delete': {
      const r = await deleteRows(o.collection, plan.read, options, plan.many);
      return { data: undefined, rows: NONE, after: r.after, noContent: true };
    }
    case 'custom': {
      const handler = o.collection.operations[plan.name];
      if (!handler) throw new ApiError('NOT_IMPLEMENTED', `Custom operation "${plan.name}" has no handler`);
      // docs/reference/rules-and-hooks.md before-image: the handler writes as trusted code, so the rows its filter matches
      // must pass the caller's row canView first. Checked on the committed state just before the
      // handler runs (its own writes go through the serialized writer, which cannot nest).
      if (o.collection.rowFiltered) await filterRows(o.collection, scope.jwt, await selectRows(rt.driver, rt.driver.dialect, plan.read));
      try {
        const data = await handler({ ...scope.context, table: o.collection.name }, { where: plan.where as never, updates: plan.updates as never, many: plan.many, limit: plan.limit });
        return { data: data ?? null, rows: NONE };
      } catch (err) {
        throw handlerError(err);
      }
    }
  }
}

function handlerError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const e = err as { userFacing?: boolean; name?: string; message?: string } | null;
  if (e?.userFacing) return new ApiError(e.name === 'NotFoundError' ? 'NOT_FOUND' : 'BAD_REQUEST', e.message);
  return err;
}
