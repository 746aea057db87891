/**
 * The live-query engine (docs/reference/live.md). Subscriptions with the same query share one SharedQuery: one
 * run per flush, one serialized payload, one last result. Committed changes (storage/changes.ts)
 * reach only the queries they can affect (change-index.ts + match.ts); those are marked dirty
 * and re-run once per flush, so a burst of writes costs one run per affected query, and a write
 * no stream watches costs a Map lookup.
 *
 * Ordering: a query never runs twice at once; changes that arrive while it runs mark it dirty
 * and it runs once more afterwards. Payloads of one query reach a subscriber in run order.
 */
import { ApiError, toApiError } from '../core/errors.js';
import type { Change } from '../storage/changes.js';
import { ChangeIndex } from './change-index.js';
import { matches } from './match.js';
import { DEFAULT_MAX_LIVE_MEMORY_BYTES, LiveMemory, STREAM_OVERHEAD_BYTES, fingerprint } from './memory.js';
import { queryKey } from './query-key.js';
import { SharedQuery, type Delivery, type Subscription } from './shared-query.js';
import { serializePayload, type LiveEngine, type LiveEngineOptions, type LiveLogger, type LiveQuery, type LiveStats, type RunQuery, type Subscriber } from './types.js';

export type { LiveEngine, LiveEngineOptions } from './types.js';

const noopLog: LiveLogger = { error: () => {}, warn: () => {} };

const memoryFull = () => new ApiError('UNAVAILABLE', 'The server holds too much live-query data right now; retry later', { headers: { 'Retry-After': '5' } });

class Engine implements LiveEngine {
  #run: RunQuery;
  #log: LiveLogger;
  #maxOpen: number;
  #maxPerIp: number;
  #maxConcurrent: number;
  #incrementalCount: boolean;
  #queries = new Map<string, SharedQuery>();
  #index = new ChangeIndex<SharedQuery>();
  #perIp = new Map<string, number>();
  #open = 0;
  #version = 0;
  #tableVersion = new Map<string, number>();
  #stamp = 0;
  #pending = new Set<SharedQuery>();
  #scheduled = false;
  #active = 0;
  #runs = 0;
  #matchEvaluations = 0;
  #closed = false;
  #memory: LiveMemory;
  /** First reads admitted and not yet over (each holds its expected size). */
  #reads = 0;
  /** A dirty query waits for memory held by runs or first reads in flight (see `#flush`). */
  #starved = false;
  /** Largest payload seen per collection: what an unknown query's first read is expected to hold. */
  #largest = new Map<LiveQuery['plan']['collection'], number>();

  constructor(o: LiveEngineOptions) {
    this.#memory = new LiveMemory(o.maxMemoryBytes ?? DEFAULT_MAX_LIVE_MEMORY_BYTES);
    this.#run = o.run;
    this.#log = o.log ?? noopLog;
    this.#maxOpen = o.maxOpen ?? 10_000;
    this.#maxPerIp = o.maxPerIp ?? 100;
    this.#maxConcurrent = Math.max(1, o.maxConcurrentRuns ?? 32);
    this.#incrementalCount = o.incrementalCount ?? false;
    // Handed to the writer as a bare listener: `writer.onCommit(engine.onCommit)`.
    this.onCommit = this.onCommit.bind(this);
  }

  get version(): number {
    return this.#version;
  }

  admit(q: LiveQuery): () => void {
    if (this.#closed) throw new ApiError('UNAVAILABLE', 'The server is shutting down');
    // The first read holds its rows and their serialization until the stream subscribes (about
    // twice its payload, like a re-run): held now, so a burst of streams cannot all be reading at
    // once past the budget. While a re-run waits for memory in flight to come back, the streams
    // already open come first: a new first read would hold more of it (and a steady trickle of
    // them would never let the re-run start).
    const hold = STREAM_OVERHEAD_BYTES + 2 * this.#expectedBytes(q);
    if (this.#starved || !this.#fits(hold)) throw memoryFull();
    this.#memory.reserve(hold);
    this.#reads++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#memory.unreserve(hold);
      this.#reads--;
      if (this.#starved) this.#schedule();
    };
  }

  /**
   * How large `q`'s first payload is likely to be: its own last payload when it is open, else the
   * largest payload seen over the same collection (O(1); an upper estimate that never shrinks).
   */
  #expectedBytes(q: LiveQuery): number {
    const same = this.#queries.get(queryKey(q));
    if (same) return same.bytes;
    return this.#largest.get(q.plan.collection) ?? 0;
  }

  #saw(q: LiveQuery, bytes: number): void {
    if (bytes > (this.#largest.get(q.plan.collection) ?? 0)) this.#largest.set(q.plan.collection, bytes);
  }

  subscribe(q: LiveQuery, s: Subscriber, ip: string): () => void {
    if (this.#closed) throw new ApiError('UNAVAILABLE', 'The server is shutting down');
    const fromIp = this.#perIp.get(ip) ?? 0;
    if (this.#open >= this.#maxOpen || fromIp >= this.#maxPerIp) {
      throw new ApiError('RATE_LIMITED', 'Too many open streams', { headers: { 'Retry-After': '1' } });
    }
    const json = s.initialJson ?? serializePayload(s.initial);
    // The first payload is about to wait on the new socket: refuse before anything starts.
    const need = STREAM_OVERHEAD_BYTES + json.length;
    this.#saw(q, json.length);
    if (!this.#fits(need)) throw memoryFull();
    const print = fingerprint(json);
    const key = queryKey(q);
    let query = this.#queries.get(key);
    let verify: boolean;
    if (!query) {
      query = new SharedQuery(key, q, json, this.#deliveryHooks);
      if (q.kind === 'count' && this.#incrementalCount && typeof s.initial === 'number') query.count = s.initial;
      this.#queries.set(key, query);
      this.#index.add(query);
      // A commit announced after the route's first read but before now was seen by nobody.
      verify = s.since === undefined || this.#changedSince(q, s.since);
    } else {
      // A clean, idle query holds the result of every announced commit: equal means current.
      verify = query.running || print !== query.print;
    }
    const sub = query.add(s, ip, print, json.length);
    this.#memory.set(sub, need);
    this.#open++;
    this.#perIp.set(ip, fromIp + 1);
    if (verify) this.#markDirty(query);
    const owner = query;
    return () => this.#unsubscribe(owner, sub);
  }

  #changedSince(q: LiveQuery, since: number): boolean {
    for (const t of q.plan.collection.reads) if ((this.#tableVersion.get(t) ?? 0) > since) return true;
    return false;
  }

  #unsubscribe(query: SharedQuery, sub: Subscription): void {
    if (!query.remove(sub)) return;
    this.#memory.release(sub);
    this.#open--;
    const n = (this.#perIp.get(sub.ip) ?? 1) - 1;
    if (n > 0) this.#perIp.set(sub.ip, n);
    else this.#perIp.delete(sub.ip);
    if (query.size === 0) this.#drop(query);
  }

  #drop(query: SharedQuery): void {
    query.closed = true;
    this.#queries.delete(query.key);
    this.#index.delete(query);
    this.#pending.delete(query);
  }

  /** Callbacks SharedQuery uses to report back without knowing the engine. */
  #deliveryHooks: Delivery = {
    fail: (query, sub, err) => {
      this.#unsubscribe(query, sub);
      try {
        sub.subscriber.fail(err);
      } catch (e) {
        this.#log.error({ err: e }, 'live stream fail() threw');
      }
    },
    pushError: (query, sub, err) => {
      this.#log.warn({ err }, 'live stream push() threw; closing the stream');
      this.#unsubscribe(query, sub);
    },
    room: (sub, bytes) => this.#makeRoom(sub, bytes),
    pushed: (sub) => {
      this.#memory.update(sub);
      this.#holdToBudget();
    },
  };

  /** Every open subscription with its query. */
  *#subscriptions(): Generator<[SharedQuery, Subscription]> {
    for (const q of this.#queries.values()) for (const sub of q.subscriptions()) yield [q, sub];
  }

  /** Does `bytes` more fit the budget? The cheap bound first, the exact count when it says no. */
  #fits(bytes: number): boolean {
    if (this.#memory.fits(bytes)) return true;
    this.#memory.refresh(this.#subscriptionsOnly());
    this.#holdToBudget();
    return this.#memory.fits(bytes);
  }

  /**
   * A socket can hold more than its stream was checked for (frame and chunk headers, UTF-8 past
   * the string's length, heartbeats): when a measure finds the count past the budget, the
   * largest streams end at once, so no reader ever sees it past the budget.
   */
  #holdToBudget(): void {
    if (!this.#memory.fits(0)) this.#endLargest(0);
  }

  *#subscriptionsOnly(): Generator<Subscription> {
    for (const [, sub] of this.#subscriptions()) yield sub;
  }

  /**
   * Pushing `bytes` to `sub` must fit the budget: past it, the streams holding the most end with
   * one 503 error payload (largest first) until it fits — possibly `sub` itself (false).
   */
  #makeRoom(sub: Subscription, bytes: number): boolean {
    return this.#shed(bytes) && !sub.closed;
  }

  /**
   * Makes `bytes` fit by ending the streams holding the most (largest first). False only when
   * every stream was ended and it still does not fit (memory in flight holds the rest).
   */
  #shed(bytes: number): boolean {
    return this.#fits(bytes) || this.#endLargest(bytes);
  }

  #endLargest(bytes: number): boolean {
    const victims = [...this.#subscriptions()].sort((a, b) => b[1].held + b[1].lastBytes - (a[1].held + a[1].lastBytes));
    const err = new ApiError('UNAVAILABLE', 'The server holds too much live-query data; this stream was ended, reopen it later', { headers: { 'Retry-After': '5' } });
    let ended = 0;
    for (const [q, victim] of victims) {
      if (this.#memory.fits(bytes)) break;
      this.#deliveryHooks.fail(q, victim, err);
      ended++;
    }
    if (ended > 0) this.#log.warn({ ended, usedBytes: this.#memory.used, maxBytes: this.#memory.max }, 'live memory budget full: ended the largest streams');
    return this.#memory.fits(bytes);
  }

  onCommit(changes: readonly Change[]): void {
    if (this.#closed) return;
    this.#version++;
    try {
      for (const change of changes) this.#route(change);
    } catch (err) {
      // Runs inside the writer's commit listener: never let a bug here reach the writer.
      this.#log.error({ err }, 'live engine failed to route a change');
    }
  }

  invalidate(tables?: readonly string[]): void {
    if (this.#closed) return;
    this.#version++;
    const only = tables ? new Set(tables) : null;
    for (const q of this.#queries.values()) {
      if (only && !q.collection.reads.some((t) => only.has(t))) continue;
      for (const t of q.collection.reads) this.#tableVersion.set(t, this.#version);
      this.#markDirty(q);
    }
    if (only) for (const t of only) this.#tableVersion.set(t, this.#version);
  }

  #route(change: Change): void {
    this.#tableVersion.set(change.table, this.#version);
    const stamp = ++this.#stamp;
    this.#index.candidates(
      change,
      (q) => {
        if (q.visit === stamp) return;
        q.visit = stamp;
        this.#offer(q, change);
      },
      (q) => {
        if (q.visit === stamp) return;
        q.visit = stamp;
        this.#markDirty(q);
      },
    );
  }

  /** A table query the change may touch: affected when the before or after image matches. */
  #offer(q: SharedQuery, change: Change): void {
    const incremental = this.#incrementalCount && q.count !== null && !q.reading && !q.dirty;
    if (q.dirty && !incremental) return; // a run is coming anyway
    this.#matchEvaluations += (change.before ? 1 : 0) + (change.after ? 1 : 0);
    const before = change.before !== null && matches(q.where, change.before);
    const after = change.after !== null && matches(q.where, change.after);
    if (!before && !after) return;
    if (incremental) {
      // The row entered or left the where; an update inside it leaves the count alone.
      if (before === after) return;
      q.count! += after ? 1 : -1;
      q.deltaPending = true;
      this.#enqueue(q);
      return;
    }
    this.#markDirty(q);
  }

  #markDirty(q: SharedQuery): void {
    q.dirty = true;
    this.#enqueue(q);
  }

  #enqueue(q: SharedQuery): void {
    if (q.running || q.closed) return; // `#finish` re-enqueues a running query that got dirty
    this.#pending.add(q);
    if (!this.#scheduled) {
      this.#scheduled = true;
      // setImmediate, not a microtask: the rest of a burst of commits lands before the flush.
      setImmediate(() => this.#flush());
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#pending.size === 0) return;
    this.#scheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    this.#starved = false;
    for (const q of this.#pending) {
      if (this.#active >= this.#maxConcurrent) return; // `#finish` flushes again
      if (q.dirty && !q.closed && !q.running && !this.#roomToRun(q)) return;
      this.#pending.delete(q);
      if (q.closed || q.running) continue;
      if (q.dirty) void this.#execute(q);
      else if (q.deltaPending) void this.#deliverCount(q);
    }
  }

  /**
   * A run holds its result and its serialized payload until delivered (about twice the last
   * payload), and the count must never pass the budget. While that does not fit, it waits for
   * the memory in flight (runs and first reads: their end flushes again). With nothing in flight
   * the budget is held by streams' unsent bytes, which no event frees: the largest streams end,
   * as for a push (possibly `q`'s own — then `q` is dropped and needs no run).
   */
  #roomToRun(q: SharedQuery): boolean {
    const need = 2 * q.bytes;
    if (this.#fits(need)) return true;
    if (this.#active > 0 || this.#reads > 0) {
      this.#starved = true;
      return false;
    }
    this.#shed(need);
    return true; // fits now, or every stream ended and `q` is closed (skipped)
  }

  async #execute(q: SharedQuery): Promise<void> {
    this.#begin(q);
    let reserved = 2 * q.bytes;
    this.#memory.reserve(reserved);
    q.dirty = false;
    q.deltaPending = false;
    q.reading = true;
    this.#runs++;
    let data: unknown;
    try {
      data = await this.#run(q.q);
    } catch (err) {
      q.reading = false;
      this.#memory.unreserve(reserved);
      this.#failQuery(q, err);
      this.#finish(q);
      return;
    }
    q.reading = false;
    try {
      if (!q.closed) {
        if (this.#incrementalCount && q.q.kind === 'count') q.count = typeof data === 'number' && !q.dirty ? data : null;
        const json = serializePayload(data);
        this.#saw(q.q, json.length);
        // A result larger than the last one holds more than was reserved for it: made room for
        // like a push (the largest streams end); with every stream gone, `q` is closed too.
        const grown = 2 * json.length - reserved;
        if (grown <= 0 || this.#shed(grown)) {
          this.#memory.unreserve(reserved);
          reserved = 2 * json.length;
          this.#memory.reserve(reserved);
        }
        if (!q.closed) await q.deliver(data, json);
      }
    } finally {
      this.#memory.unreserve(reserved);
      this.#finish(q);
    }
  }

  async #deliverCount(q: SharedQuery): Promise<void> {
    this.#begin(q);
    q.deltaPending = false;
    try {
      await q.deliver(q.count, serializePayload(q.count));
    } finally {
      this.#finish(q);
    }
  }

  #begin(q: SharedQuery): void {
    q.running = true;
    q.runId++;
    this.#active++;
  }

  #finish(q: SharedQuery): void {
    q.running = false;
    this.#active--;
    if (!q.closed && (q.dirty || q.deltaPending)) this.#enqueue(q);
    else this.#schedule();
  }

  /** The read failed (a database error, a dropped table): every stream of it gets one error. */
  #failQuery(q: SharedQuery, err: unknown): void {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) this.#log.error({ err, query: q.key }, 'live query failed');
    for (const sub of q.subscriptions()) this.#deliveryHooks.fail(q, sub, apiErr);
  }

  stats(): LiveStats {
    // A running query is never in #pending (#enqueue skips it; #flush removes before running).
    const pending = this.#pending.size + this.#active;
    return { open: this.#open, queries: this.#queries.size, runs: this.#runs, matchEvaluations: this.#matchEvaluations, pending, memoryBytes: this.#memory.used };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const shutdown = new ApiError('UNAVAILABLE', 'The server is shutting down');
    for (const q of [...this.#queries.values()]) {
      for (const sub of q.subscriptions()) {
        this.#unsubscribe(q, sub);
        try {
          if (sub.subscriber.end) sub.subscriber.end();
          else sub.subscriber.fail(shutdown);
        } catch (e) {
          this.#log.error({ err: e }, 'live stream close threw');
        }
      }
    }
    this.#pending.clear();
  }
}

/** The live-query engine; wire `onCommit` to the writer and `subscribe` to the stream routes. */
export function createLiveEngine(options: LiveEngineOptions): LiveEngine {
  return new Engine(options);
}
