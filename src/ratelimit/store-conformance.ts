/**
 * The one behaviour suite every RateLimitStore runs (ARCHITECTURE.md, habit 3): memory-store.test.ts
 * and redis-store.test.ts call it. Time is injected, so nothing here depends on the real clock.
 */
import { describe, expect, it } from 'vitest';
import type { NormalizedPolicy } from './policy.js';
import type { HitResult, RateLimitStore } from './store.js';

export interface ConformanceOptions {
  makeStore: () => RateLimitStore;
  /** Smallest window used, for stores whose keys also expire in real time (Redis PEXPIRE). */
  minWindowMs?: number;
  /** Randomized rounds; fewer for a networked store. */
  rounds?: number;
}

/** Deterministic PRNG (mulberry32) so a failing property run can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let unique = 0;
const freshKey = (name: string) => `conf|${name}|${process.pid}.${Date.now()}.${unique++}`;

export function storeConformance(name: string, options: ConformanceOptions): void {
  const { makeStore, minWindowMs = 1000, rounds = 40 } = options;
  const tenSeconds: NormalizedPolicy = { maxRequests: 3, windowMs: Math.max(10_000, minWindowMs) };
  const w = tenSeconds.windowMs;

  describe(`${name}: RateLimitStore conformance`, () => {
    it('admits maxRequests, refuses the next, and admits exactly one more once the first leaves', async () => {
      const store = makeStore();
      const key = freshKey('basic');
      const at = async (t: number) => store.hit(key, tenSeconds, t);
      const first = await at(0);
      expect(first).toMatchObject({ allowed: true, limit: 3, remaining: 2, resetSeconds: w / 1000, retryAfterSeconds: 0 });
      expect(await at(1000)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await at(2000)).toMatchObject({ allowed: true, remaining: 0 });
      // The oldest (t=0) leaves at t=w: the wait from t=3000 is w-3000 ms.
      expect(await at(3000)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: (w - 3000) / 1000, resetSeconds: (w - 3000) / 1000 });
      expect((await at(w - 1)).allowed).toBe(false);
      expect(await at(w)).toMatchObject({ allowed: true, remaining: 0 });
      // Now t=1000 is the oldest; it leaves at w+1000.
      expect(await at(w)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
      expect((await at(w + 999)).allowed).toBe(false);
      expect((await at(w + 1000)).allowed).toBe(true);
    });

    it('counts several requests within one millisecond separately', async () => {
      const store = makeStore();
      const key = freshKey('same-ms');
      const results: HitResult[] = [];
      for (let i = 0; i < 4; i++) results.push(await store.hit(key, tenSeconds, 5));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    });

    it('does not count refused requests', async () => {
      const store = makeStore();
      const key = freshKey('refused');
      const two: NormalizedPolicy = { maxRequests: 2, windowMs: w };
      expect((await store.hit(key, two, 0)).allowed).toBe(true);
      expect((await store.hit(key, two, 1)).allowed).toBe(true);
      for (let t = 2; t < w; t += Math.floor(w / 50)) expect((await store.hit(key, two, t)).allowed).toBe(false);
      // Had the refusals counted, these would still be refused.
      expect((await store.hit(key, two, w)).allowed).toBe(true);
      expect((await store.hit(key, two, w)).allowed).toBe(false);
      expect((await store.hit(key, two, w + 1)).allowed).toBe(true);
    });

    it('keeps keys independent', async () => {
      const store = makeStore();
      const a = freshKey('a');
      const b = freshKey('b');
      const one: NormalizedPolicy = { maxRequests: 1, windowMs: w };
      expect((await store.hit(a, one, 0)).allowed).toBe(true);
      expect((await store.hit(a, one, 1)).allowed).toBe(false);
      expect((await store.hit(b, one, 1)).allowed).toBe(true);
    });

    it('answers Retry-After as whole seconds within 1 ..= window, sub-second windows included', async () => {
      const store = makeStore();
      const sub: NormalizedPolicy = { maxRequests: 1, windowMs: Math.max(500, minWindowMs) };
      const k = freshKey('sub');
      await store.hit(k, sub, 0);
      const refused = await store.hit(k, sub, 100);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBe(Math.max(1, Math.ceil((sub.windowMs - 100) / 1000)));
      // A clock stepping backwards never yields a wait longer than the window.
      const k2 = freshKey('back');
      const one: NormalizedPolicy = { maxRequests: 1, windowMs: w };
      expect((await store.hit(k2, one, 1_000_000)).allowed).toBe(true);
      const back = await store.hit(k2, one, 0);
      expect(back.allowed).toBe(false);
      expect(back.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(back.retryAfterSeconds).toBeLessThanOrEqual(w / 1000);
    });

    it('matches an exact sliding-log model and never admits more than max in any window (randomized)', async () => {
      const random = prng(0xc0ffee);
      for (let round = 0; round < rounds; round++) {
        const store = makeStore();
        const key = freshKey(`prop${round}`);
        const policy: NormalizedPolicy = {
          maxRequests: 1 + Math.floor(random() * 6),
          windowMs: Math.max(minWindowMs, 1 + Math.floor(random() * 20_000)),
        };
        const admitted: number[] = [];
        let t = Math.floor(random() * 1e12);
        for (let i = 0; i < 120; i++) {
          // Bursts of same-millisecond requests, short gaps, and occasional long pauses.
          const r = random();
          t += r < 0.3 ? 0 : r < 0.9 ? Math.floor(random() * (policy.windowMs / policy.maxRequests)) : Math.floor(random() * 2 * policy.windowMs);
          const inWindow = admitted.filter((a) => t - a < policy.windowMs).length;
          const result = await store.hit(key, policy, t);
          expect(result.allowed, `round ${round} hit ${i}`).toBe(inWindow < policy.maxRequests);
          expect(Number.isInteger(result.retryAfterSeconds) && Number.isInteger(result.resetSeconds)).toBe(true);
          if (result.allowed) {
            admitted.push(t);
            expect(result.remaining).toBe(policy.maxRequests - inWindow - 1);
          } else {
            expect(result.retryAfterSeconds).toBeGreaterThanOrEqual(1);
            expect(result.retryAfterSeconds).toBeLessThanOrEqual(Math.ceil(policy.windowMs / 1000));
            // Waiting Retry-After seconds is enough: at that time the model admits.
            const later = t + result.retryAfterSeconds * 1000;
            expect(admitted.filter((a) => later - a < policy.windowMs).length).toBeLessThan(policy.maxRequests);
          }
        }
        // Any window-length interval [a_i, a_i + window) holds at most maxRequests admissions.
        for (let i = 0; i + policy.maxRequests < admitted.length; i++) {
          expect(admitted[i + policy.maxRequests]! - admitted[i]!).toBeGreaterThanOrEqual(policy.windowMs);
        }
      }
    });
  });
}
