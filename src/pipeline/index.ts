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
import { execute, type WritePlan } from './execute/index.js';
import { filterRows } from './filter-rows.js';
import type { Operation } from './operation.js';
import { planOperation, type Plan } from './plan/index.js';
import { Scope } from './scope.js';
import type { CollectionModel } from '../core/model.js';
import type { Jwt, ServerContext } from '../define/types.js';
import type { Row } from '../storage/plan.js';
import { runAfterHook } from './execute/hooks.js';
import { createRows } from './execute/writes.js';
import { readData, rowsOf } from './execute/reads.js';
import { notFound } from '../core/errors.js';

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

/**
 * Steps 2–6 for an Operation whose caller passed steps 1–2's front (`o.jwt` set). Not an async
 * function: a read's steps 2, 3 and 5 answer synchronously when its rule and row filter do, so
 * the one promise a get, list or count pays for is its statement's (each async frame and await on
 * the way cost instructions per request: docs/lifecycle.md, "What each stage costs"). A step that
 * throws still answers a rejected promise.
 */
export function runPipeline(rt: Runtime, o: Operation): Promise<PipelineResult> {
  try {
    const authorized = authorize(o); //                         2
    if (authorized) return authorized.then(() => runPlanned(rt, o, planOperation(o)));
    return runPlanned(rt, o, planOperation(o)); //              3
  } catch (err) {
    return Promise.reject(err);
  }
}

type ReadKindPlan = Extract<Plan, { kind: 'get' | 'list' | 'count' }>;
const isRead = (plan: Plan): plan is ReadKindPlan => plan.kind === 'get' || plan.kind === 'list' || plan.kind === 'count';

function runPlanned(rt: Runtime, o: Operation, plan: Plan): Promise<PipelineResult> {
  if (isRead(plan)) {
    // A read has no hook and no write: no Scope, nothing queued to run after a commit.
    return readData(rt, plan.kind, plan.read).then((data) => readResult(o, plan, data)); // 4
  }
  return runWrite(rt, o, plan);
}

/** Steps 4 (the read's 404) and 5 on a read's data. */
function readResult(o: Operation, plan: ReadKindPlan, data: unknown): PipelineResult | Promise<PipelineResult> {
  // A stream on a missing row stays open and answers null until one appears (docs/reference/live.md).
  if (data === null && o.op === 'get') throw notFound('No row matches the filter');
  const result: PipelineResult = { data, noContent: false, plan };
  const filtered = filterRows(o.collection, o.jwt, rowsOf(plan.kind, data)); // 5
  return filtered ? filtered.then(() => result) : result;
}

async function runWrite(rt: Runtime, o: Operation, plan: WritePlan): Promise<PipelineResult> {
  const scope = new Scope(rt, o.jwt);
  const done = await execute(rt, o, plan, scope); //            4
  const filtered = filterRows(o.collection, o.jwt, done.rows); // 5
  if (filtered) await filtered;
  if (done.after) await done.after(); //                        6
  scope.committed();
  return { data: done.data, noContent: done.noContent === true, plan };
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
