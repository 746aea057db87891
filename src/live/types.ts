/**
 * The live engine's vocabulary (docs/reference/live.md). The HTTP layer authorizes, rate-limits, builds the
 * ReadPlan and runs the first query; everything after that point lives in this folder.
 */
import type { ApiError } from '../core/errors.js';
import type { Change } from '../storage/changes.js';
import type { ReadPlan } from '../storage/plan.js';

/** stream-one (`/db/stream`), stream-list and stream-count. */
export type LiveKind = 'one' | 'list' | 'count';

export interface LiveQuery {
  readonly kind: LiveKind;
  readonly plan: ReadPlan;
}

/**
 * Answers a query's payload data: `row | null` for one, `{items, total}` for list, a number for
 * count. It must not depend on the caller (no row filter, no token): one result is shared by
 * every subscriber of an identical query, and per-caller checks go through `Subscriber.check`.
 */
export type RunQuery = (q: LiveQuery) => Promise<unknown>;

/** One open stream as the engine sees it. The engine never calls these synchronously from `subscribe`. */
export interface Subscriber {
  /** The data the route computed for the first payload (already sent by the route). */
  readonly initial: unknown;
  /** `serializePayload(initial)` when the route already has it, saving one stringify. */
  readonly initialJson?: string;
  /**
   * `engine.version` read before the route ran the first query. Lets the engine tell whether a
   * commit announced in between could have been missed; absent, a new query is re-run once to
   * make sure.
   */
  readonly since?: number;
  /** Receives the serialized payload `{"data": …}`; the same string is shared by every subscriber. */
  push(payloadJson: string): void;
  /**
   * Bytes written but not yet sent on this subscriber's socket, counted against the live memory
   * budget (src/live/memory.ts). Absent: the last payload pushed is counted as still waiting.
   */
  buffered?(): number;
  /**
   * The pipeline's per-change checks (docs/reference/live.md: token expiry, row filter) on the new data. An
   * error makes the engine unsubscribe this stream and call `fail`.
   */
  check?(data: unknown): Promise<ApiError | null>;
  /** Send one error payload and close. Called at most once, after the stream is unsubscribed. */
  fail(err: ApiError): void;
  /** Close without an error (engine shutdown). Absent: `fail` gets a 503 UNAVAILABLE. */
  end?(): void;
  /**
   * The transport, for counting only (the dashboard's Live screen): a stream route (absent) or a
   * subscription on `/db/live` (`socket`). The engine treats both alike; its caps count both.
   */
  readonly via?: 'stream' | 'socket';
}

/** The part of a pino logger the engine uses. */
export interface LiveLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface LiveStats {
  /** Open streams (subscriptions). */
  readonly open: number;
  /** Distinct shared queries. */
  readonly queries: number;
  /** Queries re-run through `run` since start. */
  readonly runs: number;
  /** In-memory where evaluations done for committed changes since start. */
  readonly matchEvaluations: number;
  /** Queries dirty or running right now. */
  readonly pending: number;
  /** Bytes counted against the live memory budget (an upper bound between refreshes). */
  readonly memoryBytes: number;
}

/** The envelope of the non-streaming route (docs/reference/live.md), serialized once per result. */
export function serializePayload(data: unknown): string {
  return `{"data":${JSON.stringify(data) ?? 'null'}}`;
}

export interface LiveEngineOptions {
  run: RunQuery;
  log?: LiveLogger;
  /** Server-wide cap on open streams (docs/reference/live.md: default 10,000). */
  maxOpen?: number;
  /** Per-IP cap on open streams (default 100). */
  maxPerIp?: number;
  /**
   * Budget for everything live queries hold: unsent socket bytes, per-stream overhead, results
   * being delivered (default 256 MiB; docs/reference/configuration.md `maxLiveMemoryBytes`).
   * A subscribe past it is 503 UNAVAILABLE; a change past it ends the largest streams.
   */
  maxMemoryBytes?: number;
  /** Queries re-running at once (default 32); the rest wait their turn in the flush. */
  maxConcurrentRuns?: number;
  /**
   * Update count streams by ±1 from the change images instead of re-running COUNT. Exact only
   * when commits are announced atomically with COMMIT (no read can see a commit before
   * `onCommit` hears of it); the current writer announces after an `await`, so this is off by
   * default. Correctness first.
   */
  incrementalCount?: boolean;
}

export interface LiveEngine {
  /**
   * Registers an open stream; returns its idempotent unsubscribe. Throws ApiError RATE_LIMITED
   * over the server-wide or per-IP cap (docs/reference/live.md, docs/reference/rate-limits.md), or UNAVAILABLE (with Retry-After) when
   * its first payload would pass the live memory budget, before anything is registered.
   */
  subscribe(q: LiveQuery, subscriber: Subscriber, ip: string): () => void;
  /**
   * Throws UNAVAILABLE (Retry-After) when the live memory budget is already too full for another
   * stream of `q`: call it before running the first query, so a flood of refused streams costs
   * no reads. `subscribe` checks again with the actual first payload. Until the returned release
   * is called (once the first read is over: subscribed or failed), the first read's expected size
   * is held against the budget.
   */
  admit(q: LiveQuery): () => void;
  /** The writer's commit listener. */
  onCommit(changes: readonly Change[]): void;
  /**
   * Rows of `tables` changed without images (another node's commit: only table, operation and
   * ids cross the change bus), or, without `tables`, notices may have been missed: every live
   * query reading them runs again (issue #15).
   */
  invalidate(tables?: readonly string[]): void;
  /** Commits announced so far; read it before the first query and pass it as `Subscriber.since`. */
  readonly version: number;
  stats(): LiveStats;
  /** Ends every stream (`end`, else `fail(UNAVAILABLE)`); later subscribes throw UNAVAILABLE. */
  close(): void;
}
