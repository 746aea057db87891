/**
 * One memory budget for everything live queries hold between changes (docs/reference/live.md,
 * docs/hardening.md "Live memory"): the bytes waiting on every stream's or subscription's socket,
 * a fixed overhead per stream, and the results being re-run and delivered right now. Queries keep
 * a fingerprint of their last payload, not the payload (`fingerprint`), so an idle stream whose
 * client reads costs its overhead only.
 *
 * The ledger is an upper bound kept cheaply: a push charges what its subscriber reports buffered
 * right after the write, and bytes the socket later sends are not refunded until `refresh` asks
 * every subscriber again. `refresh` (O(streams)) runs only when the bound says the budget is
 * full, so nothing is refused or ended on a stale count.
 */
import { createHash } from 'node:crypto';
import type { Subscriber } from './types.js';

export const DEFAULT_MAX_LIVE_MEMORY_BYTES = 256 * 1024 * 1024;
/** What one open stream costs besides its buffered bytes (subscription, sink, socket, timers). */
export const STREAM_OVERHEAD_BYTES = 4096;
/** Payloads up to this many characters are kept as they are: cheaper than hashing, and small. */
const KEEP_TEXT_UP_TO = 512;

/**
 * What a query keeps of its last payload to tell whether a new one differs: the text itself when
 * short, else its SHA-256. Both start differently (`{"data"` / `#`), so they never collide.
 */
export function fingerprint(json: string): string {
  if (json.length <= KEEP_TEXT_UP_TO) return json;
  return `#${createHash('sha256').update(json).digest('base64')}`;
}

/** The part of a subscription the ledger reads and writes. */
export interface Metered {
  readonly subscriber: Subscriber;
  /** Bytes this stream is counted for now. */
  held: number;
  /** Length of the last payload it was sent: its count when the subscriber cannot report `buffered`. */
  lastBytes: number;
  closed: boolean;
}

export class LiveMemory {
  readonly max: number;
  #held = 0;
  #inflight = 0;

  constructor(max: number) {
    this.max = max;
  }

  get used(): number {
    return this.#held + this.#inflight;
  }

  fits(bytes: number): boolean {
    return this.used + bytes <= this.max;
  }

  /** What the stream holds now: its socket's unsent bytes, or its last payload when it cannot tell. */
  measure(sub: Metered): number {
    const buffered = sub.subscriber.buffered?.();
    return STREAM_OVERHEAD_BYTES + (buffered === undefined ? sub.lastBytes : Math.max(0, buffered));
  }

  /** Counts `sub` for `bytes` from now on (its previous count is dropped). */
  set(sub: Metered, bytes: number): void {
    this.#held += bytes - sub.held;
    sub.held = bytes;
  }

  /** After a write: the stream holds what its socket has not sent yet. */
  update(sub: Metered): void {
    if (!sub.closed) this.set(sub, this.measure(sub));
  }

  release(sub: Metered): void {
    this.set(sub, 0);
  }

  /** Asks every stream what it still holds: the exact count, paid only when the bound is full. */
  refresh(subs: Iterable<Metered>): void {
    for (const sub of subs) this.update(sub);
  }

  /** Results being read, serialized and delivered (released when their delivery is over). */
  reserve(bytes: number): void {
    this.#inflight += bytes;
  }

  unreserve(bytes: number): void {
    this.#inflight = Math.max(0, this.#inflight - bytes);
  }
}
