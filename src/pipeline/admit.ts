/**
 * Stages 1–2's front, the one path every route family takes (docs/lifecycle.md): the rate limit
 * (429 first, SPEC §9), then the bearer token (401 INVALID_TOKEN when bad, SPEC §8) and the
 * route's access level. The table rules of /db (pipeline/authorize.ts) and a route's own rule
 * (email.canSend, auth.canSignUp) follow on the verified token.
 */
import { ApiError } from '../core/errors.js';
import type { Runtime } from '../core/runtime.js';
import type { Jwt } from '../define/types.js';
import { enforceRateLimit, type RateLimitKey } from './rate-limit.js';

/**
 * `public`: no token is read; `optional`: a sent token is verified, rules decide; `bearer`: a
 * valid token is required (401 UNAUTHENTICATED); `admin`: an admin token (403 for others).
 */
export type Access = 'public' | 'optional' | 'bearer' | 'admin';

export interface Caller {
  readonly ip: string;
  /** The Authorization header as sent. */
  readonly authorization: string | undefined;
}

/** Where the RateLimit-* headers go (the HTTP response satisfies it). */
export interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

/** The RateLimit-* headers are set on `answer` at once, so every later answer carries them. */
export async function admitCaller(rt: Runtime, caller: Caller, key: RateLimitKey | null, access: Access, answer: HeaderSink): Promise<Jwt | null> {
  if (key) {
    const limited = enforceRateLimit(rt, caller.ip, key); //                                 1
    const headers = limited instanceof Promise ? await limited : limited;
    if (headers) for (const k in headers) answer.setHeader(k, headers[k]!);
  }
  if (access === 'public') return null; //                                                  2
  const jwt = await rt.tokens.verify(caller.authorization);
  if (access === 'optional') return jwt;
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  if (access === 'admin' && jwt.admin?.isAdmin !== true) throw new ApiError('FORBIDDEN');
  return jwt;
}
