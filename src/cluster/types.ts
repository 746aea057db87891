/**
 * What nodes of one deployment share (issue #15, docs/reference/scaling.md), behind small interfaces: the change
 * bus for live queries, revocations, the rate-limit store and cron leadership. SQLite mode (one
 * process) uses the in-process implementations (local.ts); `--redis` the Redis ones (redis.ts). A
 * later mode with one process per core can plug in an inter-process implementation here without
 * touching the engine.
 */
import type { RevokedSession } from '../auth/revocation.js';
import type { HitOutcome, RateLimitStore } from '../ratelimit/store.js';
import type { Change } from '../storage/changes.js';

/** One committed batch of this node, as it crosses the bus: small (no row images). */
export interface ChangeNotice {
  /** Sending node. */
  readonly node: string;
  /** Per-node sequence number, 1, 2, 3, …: a receiver that sees a jump missed notices. */
  readonly seq: number;
  readonly changes: readonly { readonly table: string; readonly op: Change['op']; readonly ids: readonly string[] }[];
  /**
   * The committed rows with their before and after images, when the sender shipped them (workers
   * of one server, and Redis notices under the size limit): the receiver matches them in memory
   * like a local commit (`LiveEngine.onCommit`) instead of re-running every query of the tables.
   */
  readonly rows?: readonly Change[];
}

export interface ChangeBus {
  /** Announces changes this node committed (called after COMMIT). */
  publish(changes: readonly Change[]): void;
  /** Another node committed changes to `tables`. */
  onRemote(listener: (tables: readonly string[], notice: ChangeNotice) => void): void;
  /** Notices may have been missed (a gap in a node's sequence, a reconnect): re-run everything. */
  onGap(listener: () => void): void;
}

export interface RevocationBus {
  /** Tells other nodes about sessions this node revoked. */
  publish(entries: readonly RevokedSession[]): void;
  /** Revocations made on other nodes; `null` after a reconnect (reload them from the database). */
  onRemote(listener: (entries: readonly RevokedSession[] | null) => void): void;
}

export interface CronLeader {
  /** True on exactly one node per (job, tick) while the shared store answers. */
  claim(job: string, tickMs: number): Promise<boolean>;
}

/**
 * Server-wide stream caps for processes that share one server (`serve --workers`): a stream
 * takes a place before it opens and gives it back when it ends. Null: the cap is reached.
 */
export interface StreamCaps {
  acquire(ip: string): Promise<(() => void) | null>;
}

export interface Cluster {
  readonly node: string;
  readonly changes: ChangeBus;
  readonly revocations: RevocationBus;
  readonly rateLimitStore: RateLimitStore<HitOutcome>;
  readonly cron: CronLeader;
  /** `/health` detail: undefined without Redis, else whether Redis answers now. */
  redis(): 'up' | 'down' | undefined;
  close(): Promise<void>;
}
