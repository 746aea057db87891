/**
 * A request's scope for trusted hook work (docs/reference/rules-and-hooks.md): the hook context, the shared budget of 10
 * additional mutations, and mutations queued before the request's commit, which run only once it
 * has committed (and are dropped if it fails). Nested hook writes get a child scope that shares
 * the budget.
 */
import { MAX_QUEUED_MUTATIONS, type Runtime } from '../core/runtime.js';
import type { HookContext, Jwt, ListOptions, ServerContext, Update, Where } from '../define/types.js';
import type { Tx } from '../storage/driver.js';
import { countRows, selectRows } from '../storage/rows.js';
import { countPlan, MATCH_ALL, readPlan as storagePlan } from '../storage/plan.js';
import { trustedWrites } from './execute/trusted.js';
import type { WriteScope } from './execute/write-scope.js';
import { parseWhere } from './plan/where.js';
import { collectionOrThrow } from './resolve.js';

export class Scope implements WriteScope {
  readonly rt: Runtime;
  readonly jwt: Jwt | null;
  readonly #budget: { left: number };
  #deferred: (() => void)[] = [];
  #state: 'open' | 'committed' | 'failed' = 'open';
  #ctx: ServerContext | undefined;
  writeTx: Tx | undefined = undefined;

  constructor(rt: Runtime, jwt: Jwt | null, budget = { left: MAX_QUEUED_MUTATIONS }) {
    this.rt = rt;
    this.jwt = jwt;
    this.#budget = budget;
  }

  /** A scope for a hook-caused write: same caller, same budget. */
  child(): Scope {
    return new Scope(this.rt, this.jwt, this.#budget);
  }

  /** Queues trusted work; runs now if the request already committed, else after its commit. */
  queue(what: string, work: () => Promise<unknown>): void {
    if (this.#state === 'failed') return;
    if (this.#budget.left <= 0) {
      this.rt.log.warn({ what }, 'hook mutation dropped: at most 10 additional mutations per request');
      return;
    }
    this.#budget.left--;
    const run = () => void work().catch((err) => this.rt.log.error({ err, what }, 'queued hook mutation failed'));
    if (this.#state === 'committed') run();
    else this.#deferred.push(run);
  }

  committed(): void {
    this.#state = 'committed';
    for (const run of this.#deferred.splice(0)) run();
  }

  failed(): void {
    this.#state = 'failed';
    this.#deferred.length = 0;
  }

  get context(): ServerContext {
    return (this.#ctx ??= makeContext(this));
  }
}

function makeContext(scope: Scope): ServerContext {
  const { rt } = scope;
  const d = rt.driver.dialect;
  const readPlan = (table: string, where: Where | undefined, opts: ListOptions = {}) => {
    const c = collectionOrThrow(rt.model, table, true);
    const orderBy = (opts.orderBy ?? c.defaultOrder).map((o) => ({ column: c.columns.get(o.column)!, direction: o.direction ?? 'asc' }));
    return storagePlan(c, where === undefined ? MATCH_ALL : parseWhere(c, where), { orderBy, limit: opts.limit, offset: opts.offset });
  };
  const writes = trustedWrites(scope);
  const mutate: HookContext['mutate'] = {
    create: (table, object) => scope.queue(`create ${table}`, () => writes.create(table, object)),
    update: (table, where, updates, options) => scope.queue(`update ${table}`, () => writes.update(table, where, updates as Update[], options)),
    delete: (table, where, options) => scope.queue(`delete ${table}`, () => writes.delete(table, where, options)),
  };
  const noEmail = () => Promise.reject(new Error('email is not configured'));
  return Object.freeze({
    jwt: scope.jwt,
    get: async (table: string, where: Where) => (await selectRows(rt.driver, d, readPlan(table, where, { limit: 1 })))[0] ?? null,
    list: async (table: string, options?: ListOptions) => selectRows(rt.driver, d, readPlan(table, options?.where, options)),
    count: async (table: string, where?: Where) => countRows(rt.driver, d, countPlan(readPlan(table, where))),
    mutate,
    email: {
      send: (m) => (rt.email ? rt.email.send(m) : noEmail()),
      sendVerification: (user, table) => (rt.email ? rt.email.sendVerification(user, table ?? scope.jwt?.table ?? '') : noEmail()),
      sendPasswordReset: (user, table) => (rt.email ? rt.email.sendPasswordReset(user, table ?? scope.jwt?.table ?? '') : noEmail()),
    },
    push: { send: (m) => (rt.push ? rt.push.send(m, scope.writeTx) : Promise.reject(new Error('push is not configured'))) },
    log: rt.log,
    db: writes,
  } satisfies ServerContext);
}
