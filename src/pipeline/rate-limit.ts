/**
 * Step 1: rate limit by client IP × table × operation (docs/reference/rate-limits.md). 429 before any token, rule,
 * body-shape check or SQL, for every route family: /db and streams key by the table the body
 * names, auth by the auth table, photos by `_photos`, later families by their own table.
 */
import type { Runtime } from '../core/runtime.js';
import { POLICY_OP, type Operation } from './operation.js';

/** Which policy a request counts against. */
export interface RateLimitKey {
  readonly table: string;
  readonly op: string;
}

/** The key of a data or stream operation: many-forms and streams share their single/read form. */
export function rateLimitKey(o: Pick<Operation, 'op' | 'collection' | 'custom'>): RateLimitKey {
  const op = POLICY_OP[o.op];
  return { table: o.collection.name, op: op === 'custom' ? `custom:${o.custom}` : op };
}

/** Answers the RateLimit-* headers for a limited key, null for an unlimited one; throws 429. */
export function enforceRateLimit(rt: Runtime, ip: string, key: RateLimitKey): Record<string, string> | Promise<Record<string, string>> | null {
  return rt.limiter.enforce(ip, key.table, key.op);
}
