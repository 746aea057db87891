/**
 * Step 2 (after the token, pipeline/admit.ts): rules decide before any SQL. Unset means deny; a table without rules denies
 * everything; views deny every write, admins included (docs/reference/rules-and-hooks.md). Rules are pure functions of
 * the token, so decisions are cached: per token object (the auth layer hands out one object per
 * distinct token) and per collection for anonymous callers.
 */
import { forbidden } from '../core/errors.js';
import type { CollectionModel } from '../core/model.js';
import type { Jwt, Rule, RuleOperation } from '../define/types.js';
import { RULE_OF, WRITE_OPS, type Operation } from './operation.js';

const anonymous = new WeakMap<CollectionModel, Map<string, boolean>>();
const byToken = new WeakMap<Jwt, Map<string, boolean>>();

function cacheFor(c: CollectionModel, jwt: Jwt | null): Map<string, boolean> {
  const owner = jwt ?? c;
  const store = (jwt ? byToken : anonymous) as WeakMap<object, Map<string, boolean>>;
  let m = store.get(owner);
  if (!m) store.set(owner, (m = new Map()));
  return m;
}

function ruleFor(o: Operation): { rule: Rule | undefined; key: string } {
  const which = RULE_OF[o.op];
  if (which === 'custom') return { rule: o.collection.rules?.custom?.[o.custom!], key: `custom:${o.custom}` };
  return { rule: o.collection.rules?.[which], key: which };
}

/**
 * The table rule on the token stage 2's front verified (`o.jwt`); 403 when it does not answer true.
 * Answers without a promise when the rule does (and when its verdict is cached): the common read
 * pays no microtask for it.
 */
export function authorize(o: Operation): void | Promise<void> {
  const c = o.collection;
  if (c.kind === 'view' && WRITE_OPS.has(o.op)) throw forbidden();
  const { rule, key } = ruleFor(o);
  if (!rule) throw forbidden();
  // A rule that declares the operation depends on more than the token: never cached.
  if (rule.length >= 2) {
    const v = rule(o.jwt, ruleOperation(o));
    if (v instanceof Promise) return v.then((r) => allowed(r === true));
    return allowed(v === true);
  }
  const cache = cacheFor(c, o.jwt);
  const cacheKey = o.jwt ? `${c.name}\u0000${key}` : key;
  const verdict = cache.get(cacheKey);
  if (verdict !== undefined) return allowed(verdict);
  const v = rule(o.jwt, ruleOperation(o));
  const decide = (r: unknown) => {
    cache.set(cacheKey, r === true);
    allowed(r === true);
  };
  return v instanceof Promise ? v.then(decide) : decide(v);
}

function allowed(verdict: boolean): void {
  if (!verdict) throw forbidden();
}

/** What the rule is told (define/types.ts RuleOperation): the raw `where`, checked later. */
function ruleOperation(o: Operation): RuleOperation {
  const where = o.body.where;
  return {
    op: o.op,
    table: o.collection.name,
    where: typeof where === 'object' && where !== null && !Array.isArray(where) ? (where as RuleOperation['where']) : undefined,
    ...(o.custom !== undefined ? { custom: o.custom } : {}),
  };
}
