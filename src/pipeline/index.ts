/**
 * The request pipeline, in its fixed order (docs/lifecycle.md). A step runs only if the
 * previous one passed:
 *
 *   1 rate limit → 2 token + rules → 3 operations (plan) → 4 execution → 5 row filter → 6 extensions
 *
 * Step 1 and the token (admit.ts) run in the route lifecycle for every family before a /db
 * handler builds its Operation; this module runs the table rule and the rest.
 */
import type { Runtime } from '../core/runtime.js';
import { authorize } from './authorize.js';
import { execute } from './execute/index.js';
import { filterRows } from './filter-rows.js';
import type { Operation } from './operation.js';
import { planOperation, type Plan } from './plan/index.js';
import { Scope } from './scope.js';
import type { CollectionModel } from '../core/model.js';
import type { Jwt, ServerContext } from '../define/types.js';
import type { Row } from '../storage/plan.js';
import { runAfterHook } from './execute/hooks.js';
import { createRows } from './execute/writes.js';

export { admitCaller, type Access, type Caller, type HeaderSink } from './admit.js';
export { rateLimitKey, type RateLimitKey } from './rate-limit.js';
// The live read beside runPipeline: steps 1–5 plus the per-change checks, one operation for the
// stream routes and /db/live (docs/reference/live.md).
export { admitLiveRead, openLiveRead, LIVE_OP, type LiveRead } from './live-read.js';

export interface PipelineResult {
  /** undefined with `noContent` (204). */
  readonly data: unknown;
  readonly noContent: boolean;
  readonly plan: Plan;
}

/** Steps 2–6 for an Operation whose caller passed steps 1–2's front (`o.jwt` set). */
export async function runPipeline(rt: Runtime, o: Operation): Promise<PipelineResult> {
  const plan = await authorizeAndPlan(o); //                   2–3
  const scope = new Scope(rt, o.jwt);
  const done = await execute(rt, o, plan, scope); //            4
  const filtered = filterRows(o.collection, o.jwt, done.rows); // 5
  if (filtered) await filtered;
  if (done.after) await done.after(); //                        6
  scope.committed();
  return { data: done.data, noContent: done.noContent === true, plan };
}

/** Steps 2–3 (docs/reference/rules-and-hooks.md); the live read (live-read.ts) runs the same two. */
export async function authorizeAndPlan(o: Operation): Promise<Plan> {
  const authorized = authorize(o); //                           2
  if (authorized) await authorized;
  return planOperation(o); //                                   3
}

/**
 * Step 4 for a row the server itself decided (sign-up): the same write job as POST /db (the
 * serialized writer, before/after hooks, hook-queued work after the commit), without the table
 * rules, which the caller's own rule replaced (canSignUp).
 */
export async function createTrusted(rt: Runtime, c: CollectionModel, rows: Record<string, unknown>[]): Promise<Row[]> {
  const scope = new Scope(rt, null);
  const created = await createRows(c, rows, { scope, trusted: true }, false);
  await created.after(); //                                      6
  scope.committed();
  return created.value;
}

/** Step 6 for a flow without a table write (auth hooks): its own scope and mutation budget. */
export async function runHook(rt: Runtime, jwt: Jwt | null, name: string, run: (ctx: ServerContext) => unknown): Promise<void> {
  const scope = new Scope(rt, jwt);
  await runAfterHook(rt, name, () => run(scope.context));
  scope.committed();
}
