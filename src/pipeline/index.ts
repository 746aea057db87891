/**
 * The request pipeline, in the seed's fixed order (docs/lifecycle.md). A step runs only if the
 * previous one passed:
 *
 *   1 rate limit → 2 rules → 3 operations (plan) → 4 execution → 5 row filter → 6 extensions
 */
import type { Runtime } from '../core/runtime.js';
import { authorize } from './authorize.js';
import { execute } from './execute/index.js';
import { filterRows } from './filter-rows.js';
import type { Operation } from './operation.js';
import { planOperation, type Plan } from './plan/index.js';
import { rateLimit } from './rate-limit.js';
import { Scope } from './scope.js';

export interface PipelineResult {
  /** undefined with `noContent` (204). */
  readonly data: unknown;
  readonly noContent: boolean;
  /** RateLimit-* headers of a limited route. */
  readonly headers: Record<string, string> | null;
  readonly plan: Plan;
}

/** `onLimited` receives the RateLimit-* headers right after step 1, so later errors carry them too. */
export async function runPipeline(rt: Runtime, o: Operation, onLimited?: (headers: Record<string, string>) => void): Promise<PipelineResult> {
  const { headers, plan } = await admit(rt, o, onLimited); //   1–3
  const scope = new Scope(rt, o.jwt);
  const done = await execute(rt, o, plan, scope); //            4
  await filterRows(o.collection, o.jwt, done.rows); //          5
  if (done.after) await done.after(); //                        6
  scope.committed();
  return { data: done.data, noContent: done.noContent === true, headers, plan };
}

/** Steps 1–3, shared with the stream routes (seed, pipeline rule 1). */
export async function admit(rt: Runtime, o: Operation, onLimited?: (headers: Record<string, string>) => void): Promise<{ headers: Record<string, string> | null; plan: Plan }> {
  const limited = rateLimit(rt, o); //                         1
  const headers = limited instanceof Promise ? await limited : limited;
  if (headers && onLimited) onLimited(headers);
  await authorize(rt, o); //                                    2
  return { headers, plan: planOperation(o) }; //                3
}
