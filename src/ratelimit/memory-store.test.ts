import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from './memory-store.js';
import type { NormalizedPolicy } from './policy.js';
import { storeConformance } from './store-conformance.js';

storeConformance('memory', { makeStore: () => new MemoryRateLimitStore() });

const perMinute: NormalizedPolicy = { maxRequests: 100, windowMs: 60_000 };

describe('MemoryRateLimitStore memory bounds', () => {
  it('keeps at most maxKeys (default 100 000) keys under 200 000 distinct IPs', () => {
    const store = new MemoryRateLimitStore();
    let peak = 0;
    for (let i = 0; i < 200_000; i++) {
      // All within one window: nothing expires, so only the cap holds memory down.
      store.hit(`tasks|list|10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, perMinute, 1_000 + (i >> 10));
      if (store.size > peak) peak = store.size;
    }
    expect(peak).toBe(100_000);
    expect(store.size).toBe(100_000);
  });

  it('evicts the least recently used key at the cap', () => {
    const store = new MemoryRateLimitStore({ maxKeys: 3 });
    const one: NormalizedPolicy = { maxRequests: 1, windowMs: 60_000 };
    store.hit('a', one, 0);
    store.hit('b', one, 1);
    store.hit('c', one, 2);
    expect(store.hit('a', one, 3).allowed).toBe(false); // a is now the most recent
    store.hit('d', one, 4); // evicts b, the least recently used
    expect(store.size).toBe(3);
    expect(store.hit('a', one, 5).allowed).toBe(false); // a kept its count
    expect(store.hit('c', one, 6).allowed).toBe(false); // c kept its count
    expect(store.hit('b', one, 7).allowed).toBe(true); // b was forgotten (and evicts d)
    expect(store.size).toBe(3);
  });

  it('drops expired keys incrementally as traffic continues', () => {
    const store = new MemoryRateLimitStore();
    const short: NormalizedPolicy = { maxRequests: 5, windowMs: 1_000 };
    for (let i = 0; i < 10_000; i++) store.hit(`old${i}`, short, 0);
    expect(store.size).toBe(10_000);
    // Later, a handful of live clients keep hitting: each hit inspects two keys.
    for (let i = 0; i < 10_000; i++) store.hit(`live${i % 10}`, short, 5_000 + i);
    expect(store.size).toBeLessThanOrEqual(10 + 1);
    // Live keys are never dropped while they have requests inside their window.
    expect(store.hit('live0', short, 15_000).remaining).toBeLessThan(short.maxRequests - 1);
  });

  it('sweep() can be driven without traffic and drops only expired keys', () => {
    const store = new MemoryRateLimitStore({ sweepSteps: 0 });
    store.hit('short', { maxRequests: 1, windowMs: 1_000 }, 0);
    store.hit('long', { maxRequests: 1, windowMs: 60_000 }, 0);
    expect(store.size).toBe(2);
    expect(store.sweep(5_000, 10)).toBe(1);
    expect(store.size).toBe(1);
    expect(store.hit('long', { maxRequests: 1, windowMs: 60_000 }, 5_001).allowed).toBe(false);
  });

  it('grows a key log up to a large maxRequests and stays exact', () => {
    const store = new MemoryRateLimitStore();
    const big: NormalizedPolicy = { maxRequests: 1000, windowMs: 10_000 };
    for (let i = 0; i < 1000; i++) expect(store.hit('k', big, i).allowed).toBe(true);
    expect(store.hit('k', big, 1000)).toMatchObject({ allowed: false, retryAfterSeconds: 9 });
    expect(store.hit('k', big, 10_000).allowed).toBe(true);
    expect(store.hit('k', big, 10_000).allowed).toBe(false);
  });

  it('honours a lowered policy for a key that already holds more entries', () => {
    const store = new MemoryRateLimitStore();
    for (let t = 0; t < 4; t++) store.hit('k', { maxRequests: 4, windowMs: 10_000 }, t * 1000);
    const lowered: NormalizedPolicy = { maxRequests: 2, windowMs: 10_000 };
    // Four entries at 0,1,2,3 s; two may remain: admitted once the one at 2 s leaves (12 s).
    expect(store.hit('k', lowered, 5_000)).toMatchObject({ allowed: false, retryAfterSeconds: 7, remaining: 0 });
    expect(store.hit('k', lowered, 11_999).allowed).toBe(false);
    expect(store.hit('k', lowered, 12_000).allowed).toBe(true);
  });

  it('rejects invalid options', () => {
    expect(() => new MemoryRateLimitStore({ maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => new MemoryRateLimitStore({ sweepSteps: -1 })).toThrow(/sweepSteps/);
  });
});
