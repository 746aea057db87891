/**
 * In-process rate-limit store: an exact sliding log per key (docs/reference/rate-limits.md). Each key keeps the
 * timestamps of its admitted requests still inside the window in a ring buffer of at most
 * maxRequests entries, so a request is admitted iff fewer than maxRequests were admitted in the
 * preceding window — no window-length interval ever admits more. Rejected requests are not
 * recorded.
 *
 * Memory stays bounded under many distinct IPs (docs/reference/rate-limits.md): every hit also inspects a couple of keys
 * at a sweep cursor and drops those whose newest timestamp has left the window (O(1) per request,
 * the whole map covered every ~size/2 hits), and a hard cap on keys evicts the least recently
 * used one. Evicting a live key forgets its count — the price of a hard bound; an attacker who
 * can rotate through `maxKeys` addresses within one window can already spread load across them.
 */
import type { NormalizedPolicy } from './policy.js';
import { hitResult, type HitResult, type RateLimitStore } from './store.js';

export interface MemoryStoreOptions {
  /** Most keys (ip × table × op) held at once; the least recently used is evicted beyond it. Default 100 000. */
  maxKeys?: number;
  /** Keys inspected for expiry on each hit. Default 2 (must exceed 1 to outpace new keys). */
  sweepSteps?: number;
}

const INITIAL_CAPACITY = 4;

/** One key's log and its place in the recency list (least recently used at the head). */
class Bucket {
  log: Float64Array;
  /** Index of the oldest timestamp in `log`. */
  head = 0;
  size = 0;
  /** Window of the last policy applied, for deciding expiry during the sweep. */
  windowMs: number;
  prev: Bucket | null = null;
  next: Bucket | null = null;

  constructor(
    readonly key: string,
    capacity: number,
    windowMs: number,
  ) {
    this.log = new Float64Array(capacity);
    this.windowMs = windowMs;
  }

  at(i: number): number {
    return this.log[(this.head + i) % this.log.length]!;
  }

  newest(): number {
    return this.at(this.size - 1);
  }

  push(t: number, maxRequests: number): void {
    let cap = this.log.length;
    if (this.size === cap) {
      // Grow by doubling up to maxRequests, so a quiet key costs a few slots, not maxRequests.
      const grown = new Float64Array(Math.min(Math.max(cap * 2, INITIAL_CAPACITY), Math.max(maxRequests, this.size + 1)));
      for (let i = 0; i < this.size; i++) grown[i] = this.at(i);
      this.log = grown;
      this.head = 0;
      cap = grown.length;
    }
    this.log[(this.head + this.size) % cap] = t;
    this.size++;
  }

  /** Drops timestamps that left the window: admitted at t, they count while now - t < window. */
  expire(now: number, windowMs: number): void {
    const cap = this.log.length;
    while (this.size > 0 && now - this.log[this.head]! >= windowMs) {
      this.head = (this.head + 1) % cap;
      this.size--;
    }
    if (this.size === 0) this.head = 0;
  }
}

export class MemoryRateLimitStore implements RateLimitStore<HitResult> {
  readonly #map = new Map<string, Bucket>();
  readonly #maxKeys: number;
  readonly #sweepSteps: number;
  #head: Bucket | null = null;
  #tail: Bucket | null = null;
  #cursor: Bucket | null = null;

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, sweepSteps = 2 } = options;
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new Error(`rate limiter: maxKeys must be a positive whole number, got ${maxKeys}`);
    if (!Number.isSafeInteger(sweepSteps) || sweepSteps < 0) throw new Error(`rate limiter: sweepSteps must be a whole number >= 0, got ${sweepSteps}`);
    this.#maxKeys = maxKeys;
    this.#sweepSteps = sweepSteps;
  }

  /** Keys currently held. */
  get size(): number {
    return this.#map.size;
  }

  hit(key: string, policy: NormalizedPolicy, now: number): HitResult {
    const { maxRequests, windowMs } = policy;
    let b = this.#map.get(key);
    if (b === undefined) {
      if (this.#map.size >= this.#maxKeys) this.#remove(this.#head!);
      b = new Bucket(key, Math.min(INITIAL_CAPACITY, maxRequests), windowMs);
      this.#map.set(key, b);
      this.#append(b);
    } else {
      if (b !== this.#tail) this.#moveToTail(b);
      // Time never runs backwards for a key, so its log stays sorted and a clock step back
      // cannot admit extra requests.
      if (b.size > 0 && now < b.newest()) now = b.newest();
    }
    b.windowMs = windowMs;
    b.expire(now, windowMs);

    let result: HitResult;
    if (b.size < maxRequests) {
      b.push(now, maxRequests);
      result = hitResult(true, policy, b.size, b.at(0), 0, now);
    } else {
      // The request is admitted once the entry that keeps the count at maxRequests leaves; that
      // is the oldest one unless the policy was lowered since these were admitted.
      result = hitResult(false, policy, b.size, b.at(0), b.at(b.size - maxRequests), now);
    }
    this.sweep(now, this.#sweepSteps);
    return result;
  }

  /**
   * Inspects up to `steps` keys from the sweep cursor, dropping those with nothing left in their
   * window; answers how many were dropped. Runs on every hit; also callable from a timer.
   */
  sweep(now: number, steps = this.#sweepSteps): number {
    let b = this.#cursor ?? this.#head;
    let dropped = 0;
    for (let i = 0; i < steps && b !== null; i++) {
      const next = b.next;
      if (b.size === 0 || now - b.newest() >= b.windowMs) {
        this.#remove(b);
        dropped++;
      }
      b = next;
    }
    this.#cursor = b;
    return dropped;
  }

  /** Forgets every key. */
  clear(): void {
    this.#map.clear();
    this.#head = this.#tail = this.#cursor = null;
  }

  #append(b: Bucket): void {
    b.prev = this.#tail;
    b.next = null;
    if (this.#tail === null) this.#head = b;
    else this.#tail.next = b;
    this.#tail = b;
  }

  #unlink(b: Bucket): void {
    if (this.#cursor === b) this.#cursor = b.next;
    if (b.prev === null) this.#head = b.next;
    else b.prev.next = b.next;
    if (b.next === null) this.#tail = b.prev;
    else b.next.prev = b.prev;
    b.prev = b.next = null;
  }

  #moveToTail(b: Bucket): void {
    this.#unlink(b);
    this.#append(b);
  }

  #remove(b: Bucket): void {
    this.#unlink(b);
    this.#map.delete(b.key);
  }
}
