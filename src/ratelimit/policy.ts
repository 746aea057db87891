/**
 * Policy resolution (docs/reference/rate-limits.md): for every (table, operation) the project can serve, the effective
 * `{maxRequests, windowMs}` or null (unlimited), computed once at start so step 1 of the pipeline
 * costs two Map lookups and no allocation. Invalid policies fail here, at start.
 */
import type { ProjectModel } from '../core/model.js';
import type { PolicySetting, RateLimitPolicy } from '../define/types.js';
import { parseWindow } from './window.js';

export type DataPolicyOp = 'get' | 'list' | 'count' | 'create' | 'update' | 'delete';
export type AuthPolicyOp = 'signUp' | 'signIn' | 'refresh' | 'verifyEmail' | 'confirm' | 'passwordReset' | 'otp' | 'magicLink' | 'oauth';
/** Auth routes that may be called without a table (docs/reference/auth.md): keyed `auth:<operation>`. */
export type TablelessAuthOp = 'refresh' | 'confirm' | 'logout' | 'changeEmail' | 'oauth';
export type PhotoPolicyOp = 'upload' | 'view' | 'delete';
/** Many-forms and streams pass their single/read form (`createMany` → `create`, stream-list → `list`). */
export type PolicyOp = DataPolicyOp | AuthPolicyOp | PhotoPolicyOp | `custom:${string}`;

export const DATA_OPS: readonly DataPolicyOp[] = Object.freeze(['get', 'list', 'count', 'create', 'update', 'delete']);
export const AUTH_OPS: readonly AuthPolicyOp[] = Object.freeze(['signUp', 'signIn', 'refresh', 'verifyEmail', 'confirm', 'passwordReset', 'otp', 'magicLink', 'oauth']);
export const TABLELESS_AUTH_OPS: readonly TablelessAuthOp[] = Object.freeze(['refresh', 'confirm', 'logout', 'changeEmail', 'oauth']);
/**
 * The "table" part of the `auth:<operation>` keys. Table names cannot hold a colon, so no table
 * shares these counters.
 */
export const AUTH_NO_TABLE = 'auth:';
export const PHOTO_OPS: readonly PhotoPolicyOp[] = Object.freeze(['upload', 'view', 'delete']);

/** The device routes of docs/reference/push.md are limited under `_push_devices` with these operations. */
export const PUSH_TABLE = '_push_devices';
export const PUSH_OPS = Object.freeze(['register', 'list', 'unregister'] as const);

/** The table name photo routes are limited under; `delete` there is DELETE /img/{id}. */
export const PHOTOS_TABLE = '_photos';

export interface NormalizedPolicy {
  readonly maxRequests: number;
  readonly windowMs: number;
}

/** A resolved policy plus the store-key prefix of its (table, op), built once. */
export interface RoutePolicy extends NormalizedPolicy {
  /** `table|op|`: the store key is this plus the client IP. Table names and IPs hold no `|`, so keys are unambiguous. */
  readonly route: string;
}

/** docs/reference/rate-limits.md: 100 requests per minute for every key nothing overrides. */
export const DEFAULT_POLICY: NormalizedPolicy = Object.freeze({ maxRequests: 100, windowMs: 60_000 });

/**
 * The exact sliding log keeps one timestamp per admitted request, so one key's memory grows with
 * maxRequests; a million (8 MB for one busy key) is far above any sane per-IP quota.
 */
export const MAX_REQUESTS_LIMIT = 1_000_000;

export interface PolicyResolver {
  /**
   * The effective policy of (table, op), or null when the project removed the limit. Throws an
   * Error for a pair the project does not serve (unknown table, unregistered custom name, auth op
   * on a non-auth table): callers answer 404 before step 1, so reaching here is a wiring bug.
   */
  resolve(table: string, op: string): RoutePolicy | null;
  /** The policy of every unoverridden operation. */
  readonly defaultPolicy: NormalizedPolicy;
}

/** Validates one `RateLimitPolicy`; `where` names it in the error. */
export function normalizePolicy(policy: RateLimitPolicy, where: string): NormalizedPolicy {
  if (typeof policy !== 'object' || policy === null) throw new Error(`${where}: a policy is {maxRequests, window} or null`);
  const { maxRequests } = policy;
  if (typeof maxRequests !== 'number' || !Number.isInteger(maxRequests) || maxRequests < 1 || maxRequests > MAX_REQUESTS_LIMIT) {
    throw new Error(`${where}: maxRequests must be a whole number from 1 to ${MAX_REQUESTS_LIMIT}, got ${JSON.stringify(maxRequests)}`);
  }
  return Object.freeze({ maxRequests, windowMs: parseWindow(policy.window, where) });
}

type OpTable = Map<string, RoutePolicy | null>;

class Builder {
  readonly #byTable = new Map<string, OpTable>();
  readonly #default: NormalizedPolicy;

  constructor(defaultPolicy: NormalizedPolicy) {
    this.#default = defaultPolicy;
  }

  /** `setting` undefined: the default; null: unlimited (docs/reference/rate-limits.md). */
  set(table: string, op: string, setting: PolicySetting | undefined, where: string): void {
    let ops = this.#byTable.get(table);
    if (ops === undefined) this.#byTable.set(table, (ops = new Map()));
    if (setting === null) {
      ops.set(op, null);
      return;
    }
    const p = setting === undefined ? this.#default : normalizePolicy(setting, where);
    ops.set(op, Object.freeze({ maxRequests: p.maxRequests, windowMs: p.windowMs, route: `${table}|${op}|` }));
  }

  build(): PolicyResolver {
    const byTable = this.#byTable;
    return Object.freeze({
      defaultPolicy: this.#default,
      resolve(table: string, op: string): RoutePolicy | null {
        const found = byTable.get(table)?.get(op);
        if (found === undefined) throw new Error(`rate limiter: no operation "${op}" on "${table}"`);
        return found;
      },
    });
  }
}

function checkKeys(object: object, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw new Error(`${where}: unknown policy "${key}" (expected one of ${allowed.join(', ')})`);
  }
}

/**
 * Precomputes every (table, op) policy of the compiled project. Default policy precedence:
 * `defaults` (the caller's override) › `project.server.defaultPolicy` › 100 per minute.
 */
export function createPolicyResolver(model: ProjectModel, defaults?: RateLimitPolicy): PolicyResolver {
  const project = model.project;
  const fallback = defaults ?? project.server?.defaultPolicy;
  const defaultPolicy = fallback === undefined ? DEFAULT_POLICY : normalizePolicy(fallback, defaults ? 'default rate-limit policy' : 'server.defaultPolicy');
  const b = new Builder(defaultPolicy);

  for (const c of model.collections.values()) {
    const kind = c.kind === 'view' ? 'view' : 'table';
    const where = (op: string) => `${kind} "${c.name}" policy "${op}"`;
    const policies = c.policies ?? {};
    const customNames = Object.keys(c.rules?.custom ?? {});
    checkKeys(policies, c.auth ? [...DATA_OPS, 'custom', ...AUTH_OPS] : [...DATA_OPS, 'custom'], `${kind} "${c.name}"`);
    for (const op of DATA_OPS) b.set(c.name, op, policies[op], where(op));
    // Custom operations count per registered name only (docs/reference/rate-limits.md).
    const custom = policies.custom ?? {};
    for (const name of Object.keys(custom)) {
      if (!customNames.includes(name)) throw new Error(`${kind} "${c.name}": policies.custom names "${name}", which its rules do not register`);
    }
    for (const name of customNames) b.set(c.name, `custom:${name}`, Object.hasOwn(custom, name) ? custom[name] : undefined, where(`custom:${name}`));
    if (c.auth) for (const op of AUTH_OPS) b.set(c.name, op, policies[op], where(op));
  }

  const authPolicies = project.auth?.policies ?? {};
  checkKeys(authPolicies, TABLELESS_AUTH_OPS, 'auth.policies');
  for (const op of TABLELESS_AUTH_OPS) b.set(AUTH_NO_TABLE, op, authPolicies[op], `auth policy "${op}"`);

  // Photo routes (docs/reference/photos.md) are limited under `_photos`; their `delete` (DELETE /img/{id})
  // replaces the /db delete of `_photos`, which photo table rules never allow anyway.
  const photoPolicies = project.photos?.policies ?? {};
  checkKeys(photoPolicies, PHOTO_OPS, 'photos.policies');
  for (const op of PHOTO_OPS) b.set(PHOTOS_TABLE, op, photoPolicies[op], `photos policy "${op}"`);
  const pushPolicies = project.push?.policies ?? {};
  checkKeys(pushPolicies, PUSH_OPS, 'push.policies');
  for (const op of PUSH_OPS) b.set(PUSH_TABLE, `push:${op}`, pushPolicies[op], `push policy "${op}"`);
  return b.build();
}
