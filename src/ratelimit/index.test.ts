import { describe, expect, it } from 'vitest';
import { thrownApiError } from '../testing/api-errors.js';
import { compileProject } from '../core/model.js';
import { column, defineProject, table } from '../define/index.js';
import { createRateLimiter, MemoryRateLimitStore, rateLimitHeaders, type HitResult, type NormalizedPolicy, type RateLimitStore } from './index.js';
import { createPolicyResolver } from './policy.js';

const anyone = () => true;
const limited = table('limited', {
  prefix: 'lm',
  columns: { title: column.text() },
  rules: { canList: anyone, custom: { bump: anyone, other: anyone } },
  policies: {
    get: { maxRequests: 3, window: '10s' },
    list: { maxRequests: 3, window: '10s' },
    delete: null,
    custom: { bump: { maxRequests: 2, window: '10s' }, other: { maxRequests: 2, window: '10s' } },
  },
});
const resolver = createPolicyResolver(compileProject(defineProject({ tables: [limited] })));

function setup() {
  let clock = 1_000_000;
  const store = new MemoryRateLimitStore();
  const limiter = createRateLimiter({ resolver, store, now: () => clock });
  return { limiter, store, advance: (ms: number) => (clock += ms) };
}

describe('createRateLimiter', () => {
  it('limits per ip × table × op with the 3-per-10s example', () => {
    const { limiter, advance } = setup();
    for (let i = 0; i < 3; i++) expect(limiter.check('1.1.1.1', 'limited', 'get')!.allowed).toBe(true);
    expect(limiter.check('1.1.1.1', 'limited', 'get')!.allowed).toBe(false);
    // Another IP and another op of the same table count separately.
    expect(limiter.check('2.2.2.2', 'limited', 'get')!.allowed).toBe(true);
    expect(limiter.check('1.1.1.1', 'limited', 'list')!.allowed).toBe(true);
    advance(10_000);
    expect(limiter.check('1.1.1.1', 'limited', 'get')!.allowed).toBe(true);
  });

  it('answers null for an unlimited route without touching the store', () => {
    const hits: string[] = [];
    const spy: RateLimitStore<HitResult> = {
      hit(key: string, policy: NormalizedPolicy) {
        hits.push(key);
        return { allowed: true, limit: policy.maxRequests, remaining: 0, resetSeconds: 1, retryAfterSeconds: 0 };
      },
    };
    const limiter = createRateLimiter({ resolver, store: spy });
    for (let i = 0; i < 500; i++) expect(limiter.check('1.1.1.1', 'limited', 'delete')).toBeNull();
    expect(limiter.enforce('1.1.1.1', 'limited', 'delete')).toBeNull();
    expect(hits).toEqual([]);
    limiter.check('1.1.1.1', 'limited', 'count');
    expect(hits).toEqual(['limited|count|1.1.1.1']);
  });

  it('keeps an independent counter per custom operation name', () => {
    const { limiter } = setup();
    expect(limiter.check('1.1.1.1', 'limited', 'custom:bump')!.allowed).toBe(true);
    expect(limiter.check('1.1.1.1', 'limited', 'custom:bump')!.allowed).toBe(true);
    expect(limiter.check('1.1.1.1', 'limited', 'custom:bump')!.allowed).toBe(false);
    expect(limiter.check('1.1.1.1', 'limited', 'custom:other')!.allowed).toBe(true);
    expect(() => limiter.check('1.1.1.1', 'limited', 'custom:unregistered')).toThrow(/no operation/);
  });

  it('enforce answers RateLimit-* headers, then throws 429 with Retry-After', () => {
    const { limiter, advance } = setup();
    expect(limiter.enforce('1.1.1.1', 'limited', 'get')).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '10' });
    advance(4_000);
    limiter.enforce('1.1.1.1', 'limited', 'get');
    limiter.enforce('1.1.1.1', 'limited', 'get');
    const err = thrownApiError(() => limiter.enforce('1.1.1.1', 'limited', 'get'));
    expect(err.code).toBe('RATE_LIMITED');
    expect(err.status).toBe(429);
    expect(err.headers).toEqual({ 'Retry-After': '6', 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '6' });
    // The refusal was not counted: once the first request leaves, one more passes.
    advance(6_000);
    expect(limiter.enforce('1.1.1.1', 'limited', 'get')).toMatchObject({ 'RateLimit-Remaining': '0' });
  });

  it('enforce works with an asynchronous store', async () => {
    const memory = new MemoryRateLimitStore();
    const asyncStore: RateLimitStore<Promise<HitResult>> = { hit: async (k, p, n) => memory.hit(k, p, n) };
    const limiter = createRateLimiter({ resolver, store: asyncStore, now: () => 0 });
    await expect(limiter.enforce('1.1.1.1', 'limited', 'custom:bump')).resolves.toMatchObject({ 'RateLimit-Limit': '2' });
    await limiter.enforce('1.1.1.1', 'limited', 'custom:bump');
    await expect(limiter.enforce('1.1.1.1', 'limited', 'custom:bump')).rejects.toMatchObject({ code: 'RATE_LIMITED', headers: { 'Retry-After': '10' } });
    expect(limiter.enforce('1.1.1.1', 'limited', 'delete')).toBeNull();
  });

  it('rateLimitHeaders formats a result', () => {
    expect(rateLimitHeaders({ allowed: true, limit: 100, remaining: 99, resetSeconds: 60, retryAfterSeconds: 0 })).toEqual({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '99',
      'RateLimit-Reset': '60',
    });
  });
});
