/** Step 1: rate limit by client IP × table × operation (SPEC §9). 429 before any rule or SQL. */
import type { Runtime } from '../core/runtime.js';
import { POLICY_OP, type Operation } from './operation.js';

/** Answers the RateLimit-* headers for a limited key, null for an unlimited one; throws 429. */
export function rateLimit(rt: Runtime, o: Operation): Record<string, string> | Promise<Record<string, string>> | null {
  const op = POLICY_OP[o.op] === 'custom' ? `custom:${o.custom}` : POLICY_OP[o.op];
  return rt.limiter.enforce(o.ip, o.collection.name, op);
}
