/**
 * The rate-limit store: one small interface with a memory implementation (one process) and a
 * Redis one (several processes sharing counters), like the other swappable parts
 * (ARCHITECTURE.md, habit 3). Both keep an exact sliding log (docs/reference/rate-limits.md).
 */
import type { NormalizedPolicy } from './policy.js';

export interface HitResult {
  /** False: over the limit; the request was not counted (docs/reference/rate-limits.md). */
  readonly allowed: boolean;
  /** The policy's maxRequests (`RateLimit-Limit`). */
  readonly limit: number;
  /** Requests still admitted in the current window after this one (`RateLimit-Remaining`). */
  readonly remaining: number;
  /** Whole seconds until the oldest counted request leaves the window (`RateLimit-Reset`). */
  readonly resetSeconds: number;
  /** Whole seconds (1 ..= window) until a request would be admitted; 0 when allowed (docs/reference/rate-limits.md). */
  readonly retryAfterSeconds: number;
}

export type HitOutcome = HitResult | Promise<HitResult>;

export interface RateLimitStore<R extends HitOutcome = HitOutcome> {
  /**
   * Counts a request for `key` at `now` (ms) when fewer than `maxRequests` were admitted in the
   * `windowMs` before it — the interval (now - windowMs, now] — and answers the outcome.
   */
  hit(key: string, policy: NormalizedPolicy, now: number): R;
}

/**
 * Whole seconds until `untilMs` (an absolute time), clamped to 1 ..= ceil(window / 1000): a
 * client waiting that long is admitted, and a clock step backwards never yields more than the
 * window (docs/reference/rate-limits.md). Sub-second windows answer 1, the smallest whole second.
 */
export function secondsUntil(untilMs: number, now: number, windowMs: number): number {
  const max = Math.ceil(windowMs / 1000);
  const s = Math.ceil((untilMs - now) / 1000);
  return s < 1 ? 1 : s > max ? max : s;
}

/** Builds the outcome of one hit from the count in the window and the relevant timestamps. */
export function hitResult(allowed: boolean, policy: NormalizedPolicy, countAfter: number, oldestMs: number, unblockMs: number, now: number): HitResult {
  const remaining = policy.maxRequests - countAfter;
  return {
    allowed,
    limit: policy.maxRequests,
    remaining: remaining > 0 ? remaining : 0,
    resetSeconds: secondsUntil(oldestMs + policy.windowMs, now, policy.windowMs),
    retryAfterSeconds: allowed ? 0 : secondsUntil(unblockMs + policy.windowMs, now, policy.windowMs),
  };
}
