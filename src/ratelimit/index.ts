/**
 * Step 1 of the pipeline (docs/reference/rate-limits.md): count requests per client IP × table × operation and refuse
 * with 429 before any rule runs or SQL is built. The store is swappable (memory or Redis); the
 * resolver has every (table, op) policy precomputed, so an unlimited route costs two Map lookups.
 *
 * @example
 *   const limiter = createRateLimiter({ resolver: createPolicyResolver(model), store: new MemoryRateLimitStore() });
 *   const headers = limiter.enforce(ip, 'tasks', 'list'); // throws 429 RATE_LIMITED; null when unlimited
 */
import { ApiError } from '../core/errors.js';
import type { PolicyResolver } from './policy.js';
import type { HitOutcome, HitResult, RateLimitStore } from './store.js';

export type RateLimitHeaders = Record<string, string>;

/** What `enforce` answers for a store's outcome: headers, or a promise of them for async stores. */
export type Enforced<R extends HitOutcome> = R extends Promise<HitResult> ? Promise<RateLimitHeaders> : RateLimitHeaders;

export interface RateLimiterOptions<R extends HitOutcome> {
  resolver: PolicyResolver;
  store: RateLimitStore<R>;
  /** Milliseconds now; injectable for tests. Default `Date.now`. */
  now?: () => number;
}

export interface RateLimiter<R extends HitOutcome = HitOutcome> {
  /** Counts the request; null when (table, op) is unlimited. Throws for a pair the project lacks. */
  check(ip: string, table: string, op: string): R | null;
  /** `check`, then throws 429 RATE_LIMITED when refused; answers the RateLimit-* headers, null when unlimited. */
  enforce(ip: string, table: string, op: string): Enforced<R> | null;
  readonly resolver: PolicyResolver;
}

/** `RateLimit-*` headers for an answer on a limited route (docs/reference/rate-limits.md). */
export function rateLimitHeaders(result: HitResult): RateLimitHeaders {
  return {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(result.resetSeconds),
  };
}

/** The 429 for a refused request, carrying `Retry-After` (docs/reference/rate-limits.md) and the RateLimit-* headers. */
export function rateLimitedError(result: HitResult): ApiError {
  // A flood of refusals is exactly when 429s are hot; capturing a stack (the bulk of an Error's
  // cost) for an expected refusal buys nothing.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ApiError('RATE_LIMITED', 'Too many requests; retry later', {
      headers: { 'Retry-After': String(result.retryAfterSeconds), ...rateLimitHeaders(result) },
    });
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** Throws the 429 when `result` was refused; otherwise answers its RateLimit-* headers. */
export function assertAllowed(result: HitResult): RateLimitHeaders {
  if (!result.allowed) throw rateLimitedError(result);
  return rateLimitHeaders(result);
}

export function createRateLimiter<R extends HitOutcome>(options: RateLimiterOptions<R>): RateLimiter<R> {
  const { resolver, store } = options;
  const now = options.now ?? Date.now;

  function check(ip: string, table: string, op: string): R | null {
    const policy = resolver.resolve(table, op);
    if (policy === null) return null;
    // The route prefix is built once per (table, op); the key costs one concatenation.
    return store.hit(policy.route + ip, policy, now());
  }

  function enforce(ip: string, table: string, op: string): Enforced<R> | null {
    const outcome: HitOutcome | null = check(ip, table, op);
    if (outcome === null) return null;
    if ('then' in outcome) return outcome.then(assertAllowed) as Enforced<R>;
    return assertAllowed(outcome) as Enforced<R>;
  }

  return Object.freeze({ check, enforce, resolver });
}

export {
  AUTH_OPS,
  AUTH_NO_TABLE,
  TABLELESS_AUTH_OPS,
  DATA_OPS,
  DEFAULT_POLICY,
  MAX_REQUESTS_LIMIT,
  PHOTO_OPS,
  PHOTOS_TABLE,
  createPolicyResolver,
  normalizePolicy,
  type AuthPolicyOp,
  type TablelessAuthOp,
  type DataPolicyOp,
  type NormalizedPolicy,
  type PhotoPolicyOp,
  type PolicyOp,
  type PolicyResolver,
  type RoutePolicy,
} from './policy.js';
export { parseWindow } from './window.js';
export { hitResult, secondsUntil, type HitOutcome, type HitResult, type RateLimitStore } from './store.js';
export { MemoryRateLimitStore, type MemoryStoreOptions } from './memory-store.js';
export { RedisRateLimitStore, SLIDING_LOG_SCRIPT, parseSlidingLogReply, type RedisEvalClient, type RedisStoreOptions } from './redis-store.js';
export { clientKey, createClientIp, normalizeIp, trustedProxyList, type ClientIp } from './client-ip.js';
