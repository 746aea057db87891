/**
 * Stages 1–2's front, the one path every route family takes (docs/lifecycle.md): the rate limit
 * (429 first, docs/reference/rate-limits.md), then the bearer token (401 INVALID_TOKEN when bad, docs/reference/auth.md) and the
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

/**
 * The RateLimit-* headers are set on `answer` at once, so every later answer carries them. Answers
 * without a promise when neither the limiter nor the token check needs one (the memory store, an
 * anonymous or cached caller): the common request pays no extra microtask.
 */
export function admitCaller(rt: Runtime, caller: Caller, key: RateLimitKey | null, access: Access, answer: HeaderSink): Jwt | null | Promise<Jwt | null> {
  if (key) {
    const limited = enforceRateLimit(rt, caller.ip, key); //                                 1
    if (limited instanceof Promise) return limited.then((headers) => (setAll(answer, headers), verifyCaller(rt, caller, access)));
    setAll(answer, limited);
  }
  return verifyCaller(rt, caller, access);
}

function setAll(answer: HeaderSink, headers: Record<string, string> | null): void {
  if (headers) for (const k in headers) answer.setHeader(k, headers[k]!);
}

function verifyCaller(rt: Runtime, caller: Caller, access: Access): Jwt | null | Promise<Jwt | null> {
  if (access === 'public') return null; //                                                  2
  const jwt = rt.tokens.verify(caller.authorization);
  return jwt instanceof Promise ? jwt.then((j) => allowed(j, access)) : allowed(jwt, access);
}

function allowed(jwt: Jwt | null, access: Access): Jwt | null {
  if (access === 'optional') return jwt;
  if (!jwt) throw new ApiError('UNAUTHENTICATED');
  if (access === 'admin' && jwt.admin?.isAdmin !== true) throw new ApiError('FORBIDDEN');
  return jwt;
}
