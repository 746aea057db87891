/**
 * Redis rate-limit store, for several server processes sharing counters. Same exact sliding log
 * as the memory store (docs/reference/rate-limits.md), kept as a sorted set of admitted-request timestamps per key and
 * updated by one Lua script, so check-and-count is atomic across processes. The client is any
 * object with ioredis' `eval` (and optionally `evalsha`, which saves resending the script).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { NormalizedPolicy } from './policy.js';
import { hitResult, type HitResult, type RateLimitStore } from './store.js';

export interface RedisEvalClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha?(sha1: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export interface RedisStoreOptions {
  /** Prepended to every key. Default `tb:rl:`. */
  prefix?: string;
  /**
   * Whose clock stamps requests: `client` (the `now` handed to `hit`, default) or `server` (Redis
   * TIME, so processes with skewed clocks still share one timeline).
   */
  clock?: 'client' | 'server';
}

/**
 * KEYS[1]: the log. ARGV: now (ms, or "" for Redis TIME), windowMs, maxRequests, unique member.
 * Answers {allowed, countAfter, oldest, unblock, now}. Scores are whole milliseconds, formatted
 * with %d because Lua's default number formatting (%.14g) would round large values.
 */
export const SLIDING_LOG_SCRIPT = `
local key = KEYS[1]
local now
if ARGV[1] == '' then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
-- Time never runs backwards for a key, so a clock step back cannot admit extra requests.
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) > now then now = tonumber(newest[2]) end
-- Entries admitted at t count while now - t < window.
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - window))
local count = redis.call('ZCARD', key)
local allowed = 0
if count < max then
  redis.call('ZADD', key, string.format('%d', now), ARGV[4])
  redis.call('PEXPIRE', key, window)
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local unblock = oldest
if allowed == 0 then unblock = redis.call('ZRANGE', key, count - max, count - max, 'WITHSCORES') end
return {allowed, count, tonumber(oldest[2]), tonumber(unblock[2]), now}
`;

const SCRIPT_SHA1 = createHash('sha1').update(SLIDING_LOG_SCRIPT).digest('hex');

function toNumber(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error('rate limiter: unexpected reply from Redis');
  return n;
}

/** Turns the script's reply into a HitResult (exported for tests of the reply handling). */
export function parseSlidingLogReply(reply: unknown, policy: NormalizedPolicy): HitResult {
  if (!Array.isArray(reply) || reply.length !== 5) throw new Error('rate limiter: unexpected reply from Redis');
  const [allowed, count, oldest, unblock, now] = reply.map(toNumber) as [number, number, number, number, number];
  return hitResult(allowed === 1, policy, count, oldest, unblock, now);
}

export class RedisRateLimitStore implements RateLimitStore<Promise<HitResult>> {
  readonly #client: RedisEvalClient;
  readonly #prefix: string;
  readonly #serverClock: boolean;
  /** Members must be unique per request even within one millisecond and across processes. */
  readonly #instance = randomBytes(6).toString('base64url');
  #seq = 0;

  constructor(client: RedisEvalClient, options: RedisStoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? 'tb:rl:';
    this.#serverClock = options.clock === 'server';
  }

  async hit(key: string, policy: NormalizedPolicy, now: number): Promise<HitResult> {
    this.#seq = (this.#seq + 1) % Number.MAX_SAFE_INTEGER;
    const args = [this.#prefix + key, this.#serverClock ? '' : String(Math.floor(now)), String(policy.windowMs), String(policy.maxRequests), `${this.#instance}:${this.#seq}`];
    return parseSlidingLogReply(await this.#eval(args), policy);
  }

  async #eval(args: string[]): Promise<unknown> {
    const client = this.#client;
    if (client.evalsha) {
      try {
        return await client.evalsha(SCRIPT_SHA1, 1, ...args);
      } catch (err) {
        // NOSCRIPT: the server has not cached the script yet (or restarted); EVAL caches it.
        if (!(err instanceof Error && err.message.includes('NOSCRIPT'))) throw err;
      }
    }
    return client.eval(SLIDING_LOG_SCRIPT, 1, ...args);
  }
}
