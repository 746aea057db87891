/**
 * What crosses between the primary and the workers of `serve --workers` (docs/reference/scaling.md),
 * over node:cluster's IPC channel (a pipe private to the process tree, JSON-serialized). Row
 * images travel here in full, private columns included: only processes of this one server can
 * read the channel.
 */
import type { RevokedSession } from '../auth/revocation.js';
import type { NormalizedPolicy } from '../ratelimit/policy.js';
import type { HitResult } from '../ratelimit/store.js';
import type { Change } from '../storage/changes.js';
import type { ProcessFigures } from '../dashboard/process-figures.js';

/** One answered request, as a worker hands it to the primary for metrics, the log and the history. */
export type Observation = readonly [method: string, route: string, status: number, ms: number, requestId: string, ip: string, at: number];

/**
 * Observations as they cross, column by column (encoded and decoded by ./observations.ts): per
 * request six integers in `rows` (method, route and ip as indexes into `names`; the status; the
 * latency in hundredths of a ms; ms after `base`) and its request id in `ids`.
 */
export interface ObservationBatch {
  readonly names: readonly string[];
  /** Epoch ms of the batch's first request. */
  readonly base: number;
  readonly rows: readonly number[];
  readonly ids: readonly string[];
}

/** Live-stream figures of one process, for the dashboard. */
export interface LiveFigures {
  readonly open: number;
  readonly queries: number;
  /** Bytes counted against this worker's share of `maxLiveMemoryBytes`. */
  readonly memoryBytes?: number;
  /** Open streams by route and table (the dashboard's live view). */
  readonly streams: readonly { readonly route: string; readonly table: string; readonly open: number }[];
  /** The worker's own row of the dashboard's per-process table (requests/s, memory, event-loop delay). */
  readonly process?: ProcessFigures;
}

export type ToPrimary =
  | { readonly t: 'changes'; readonly changes: readonly Change[] }
  | { readonly t: 'revoke'; readonly entries: readonly RevokedSession[] }
  | { readonly t: 'rl'; readonly id: number; readonly key: string; readonly policy: NormalizedPolicy; readonly now: number }
  | ({ readonly t: 'obs' } & ObservationBatch)
  | { readonly t: 'gathered'; readonly id: number; readonly live: LiveFigures }
  /** May one more stream open for `ip`? (stream caps are server-wide) */
  | { readonly t: 'stream'; readonly id: number; readonly ip: string }
  | { readonly t: 'unstream'; readonly ip: string }
  /**
   * This worker has live queries open (true) or none left (false). Committed changes go only to
   * workers that have: with no stream open, shipping every write's rows to every worker cost
   * the primary about a quarter of its CPU per write (docs/scaling.md). The primary answers `on`
   * with a `gap`, so queries opened before it heard run again and miss nothing.
   */
  | { readonly t: 'watch'; readonly on: boolean };

export type ToWorker =
  | { readonly t: 'changes'; readonly changes: readonly Change[] }
  /** A change from another node (Redis) that came without its rows: re-run these tables' queries. */
  | { readonly t: 'tables'; readonly tables: readonly string[] }
  | { readonly t: 'gap' }
  | { readonly t: 'revoke'; readonly entries: readonly RevokedSession[] | null }
  | { readonly t: 'rl'; readonly id: number; readonly result: HitResult }
  | { readonly t: 'gather'; readonly id: number }
  | { readonly t: 'stream'; readonly id: number; readonly ok: boolean }
  /**
   * What the workers' `/health` reports: readiness, Redis, the primary's backup (which runs only
   * there), and whether the primary's writes meet a full disk (SQLite: the one writer is there).
   */
  | { readonly t: 'state'; readonly ready: boolean; readonly redis: 'up' | 'down' | undefined; readonly backupFailing?: boolean; readonly diskFull?: boolean };

/** The message channel to the other side; node:cluster's worker or process in production. */
export interface Channel<Out, In> {
  send(message: Out): void;
  onMessage(listener: (message: In) => void): void;
}

export const isMessage = (m: unknown): m is { t: string } => typeof m === 'object' && m !== null && typeof (m as { t?: unknown }).t === 'string';
