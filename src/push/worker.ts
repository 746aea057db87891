/**
 * The delivery worker (docs/reference/push.md): drains `_push_queue` in the background.
 *
 *   claim (lease rows, one write job per provider) → send (≤ concurrency per provider in flight)
 *   → record outcomes (batched into one write job): sent → delete; dead → delete the device and
 *   its rows; retry → reschedule with exponential backoff and jitter (at least Retry-After);
 *   failed or out of tries → delete and remember the reason.
 *
 * Rows are deleted only after the provider answered, so a crash between send and record sends
 * again: at-least-once. A claimed row carries a short lease (10 s) that the worker renews every
 * third of it while the row is in flight or its outcome unwritten; when the worker dies (kill -9,
 * a lost node) the renewals stop and the row is claimable again within one lease, by any node.
 * SQLite (one process) also releases all leases at start. Renewals and retries are fenced by the
 * row's `attempts` (counted by each claim), so a worker whose lease lapsed never extends or
 * reschedules another node's claim.
 */
import type { Logger } from '../define/types.js';
import type { SqlRunner, Tx } from '../storage/driver.js';
import { describe, type Outcome, type Platform, type PushPayload, type PushProvider } from './provider.js';
import type { Claimed, PushStore } from './store.js';

export interface WorkerOptions {
  store: PushStore;
  providers: ReadonlyMap<Platform, PushProvider>;
  /** Runs a write job on the serialized writer. */
  write: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;
  reader: SqlRunner;
  log: Logger;
  maxAttempts: number;
  retryBaseMs: number;
  /** How long a claim holds a row without renewal (renewed every third of it while held). */
  leaseMs?: number;
  /** How often to look for due rows when not woken (rows queued by other nodes, due retries). */
  pollMs?: number;
  /** Release every lease at start: true where only this process can hold them (SQLite). */
  releaseAtStart: boolean;
}

export interface PushFailure {
  at: string;
  platform: Platform;
  deviceId: string;
  reason: string;
}

export interface PushCounts {
  sent: number;
  failed: number;
  retried: number;
  removedDevices: number;
}

const MAX_DELAY_MS = 3_600_000;
/**
 * Short, renewed leases rather than one longer than any send: a dead node's rows come back within
 * seconds (there is no node registry to ask whether the lease holder is alive), and a live node
 * keeps its rows however long a send or an outcome write takes.
 */
const DEFAULT_LEASE_MS = 10_000;
/** Outcomes are written together: at most this many per job, at least this often (one transaction each). */
const FLUSH_BATCH = 512;
const FLUSH_DELAY_MS = 20;

/** `base · 2^(attempt-1)`, half of it random ("equal jitter"), never below the provider's Retry-After. */
export function backoffMs(attempt: number, baseMs: number, retryAfterMs = 0, random = Math.random): number {
  const exp = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.min(attempt - 1, 30));
  // Whole milliseconds: the queue's times are BIGINT on PostgreSQL.
  return Math.ceil(Math.min(MAX_DELAY_MS, Math.max(retryAfterMs, exp / 2 + random() * (exp / 2))));
}

export class DeliveryWorker {
  readonly counts: PushCounts = { sent: 0, failed: 0, retried: 0, removedDevices: 0 };
  readonly failures: PushFailure[] = [];
  readonly #o: WorkerOptions;
  readonly #inflight = new Map<Platform, number>();
  /** Sends in flight per user: no user may hold more than a quarter of a provider's slots. */
  readonly #perUser = new Map<string, number>();
  readonly #claiming = new Set<Platform>();
  /** Rows this worker holds (claimed, outcome not yet written): id → `attempts` of its claim. */
  readonly #held = new Map<string, number>();
  #renewing = false;
  #renew: NodeJS.Timeout | undefined;
  #done: string[] = [];
  #later: { id: string; attempts: number; at: number; error: string }[] = [];
  #dead = new Set<string>();
  #flushing: Promise<void> | undefined;
  #flushSoon: NodeJS.Timeout | undefined;
  #timer: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  #stopped = false;
  #idle: (() => void)[] = [];

  constructor(o: WorkerOptions) {
    this.#o = o;
  }

  async start(): Promise<void> {
    if (this.#o.releaseAtStart) await this.#o.write((tx) => this.#o.store.releaseAll(tx, Date.now()));
    const pollMs = this.#o.pollMs ?? Math.min(1000, Math.max(25, this.#o.retryBaseMs / 2));
    this.#poll = setInterval(() => this.wake(), pollMs).unref();
    this.#renew = setInterval(() => void this.#renewLeases(), this.#leaseMs / 3).unref();
    this.wake();
  }

  get #leaseMs(): number {
    return this.#o.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Extends the leases of held rows; a failed renewal is tried again at the next tick, well within the lease. */
  async #renewLeases(): Promise<void> {
    if (this.#renewing || this.#held.size === 0) return;
    this.#renewing = true;
    const held = new Map(this.#held);
    try {
      await this.#o.write((tx) => this.#o.store.renew(tx, held, Date.now() + this.#leaseMs));
    } catch (err) {
      this.#o.log.debug({ err }, 'push lease renewal deferred');
    } finally {
      this.#renewing = false;
    }
  }

  /** Something may be due: claim now (coalesced). */
  wake(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const p of this.#o.providers.values()) void this.#pump(p);
    }, 0);
  }

  pending(): Promise<number> {
    return this.#o.store.pending(this.#o.reader);
  }

  /** Stops claiming, waits up to `graceMs` for sends in flight, records what came back, closes providers. */
  async stop(graceMs = 2000): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poll);
    clearInterval(this.#renew);
    clearTimeout(this.#timer);
    clearTimeout(this.#flushSoon);
    this.#flushSoon = undefined;
    if (this.#busy()) await Promise.race([new Promise<void>((r) => this.#idle.push(r)), new Promise((r) => setTimeout(r, graceMs).unref())]);
    await this.#flush();
    await Promise.all([...this.#o.providers.values()].map((p) => p.close().catch(() => undefined)));
  }

  #busy(): boolean {
    for (const n of this.#inflight.values()) if (n > 0) return true;
    return false;
  }

  async #pump(p: PushProvider): Promise<void> {
    const busy = this.#inflight.get(p.platform) ?? 0;
    const free = p.concurrency - busy;
    // Claim in batches (a quarter of the slots at least) so a fast provider does not cost one write job per message.
    if (this.#stopped || this.#claiming.has(p.platform) || free <= 0 || (busy > 0 && free < Math.ceil(p.concurrency / 4))) return;
    this.#claiming.add(p.platform);
    let rows: Claimed[] = [];
    try {
      const now = Date.now();
      // Fair shares: one user's hanging endpoints hold at most a quarter of the slots, so another
      // user's delivery waits for at most one request timeout (docs/reference/push.md).
      const share = Math.max(1, Math.floor(p.concurrency / 4));
      const excludeUsers = [...this.#perUser].filter(([, n]) => n >= share).map(([u]) => u);
      const fair = { excludeUsers, perUser: share };
      rows = await this.#o.write((tx) => this.#o.store.claim(tx, p.platform, free, now, now + this.#leaseMs, fair));
      for (const r of rows) this.#perUser.set(r.userId, (this.#perUser.get(r.userId) ?? 0) + 1);
    } catch (err) {
      // Busy writer (503) or a database error: the next poll tries again.
      this.#o.log.debug({ err }, 'push claim deferred');
    } finally {
      this.#claiming.delete(p.platform);
    }
    // Counted in flight at once, so a pump running during the yields below cannot overfill the slots.
    this.#inflight.set(p.platform, (this.#inflight.get(p.platform) ?? 0) + rows.length);
    for (const r of rows) this.#held.set(r.id, r.attempts);
    for (let i = 0; i < rows.length; i++) {
      this.#deliver(p, rows[i]!);
      // Web Push encryption is synchronous CPU work: yield now and then so requests interleave.
      if (i % 8 === 7) await new Promise((r) => setImmediate(r));
    }
    if (rows.length > 0 && rows.length < free && !this.#stopped)
      void this.#pump(p); // free slots left: other users may be due
    else if (rows.length === free) void this.#pump(p);
  }

  /** Sends one claimed row (already counted in flight) and records the outcome. */
  #deliver(p: PushProvider, row: Claimed): void {
    const send = async (): Promise<Outcome> => {
      if (row.expiresAt <= Date.now()) return { kind: 'failed', reason: 'expired before delivery' };
      let payload: PushPayload;
      try {
        payload = JSON.parse(row.payload) as PushPayload;
      } catch {
        return { kind: 'failed', reason: 'unreadable payload' };
      }
      return p.send(row.target, payload, row.expiresAt).catch((err): Outcome => ({ kind: 'retry', reason: describe(err) }));
    };
    void send()
      .then((outcome) => this.#record(p.platform, row, outcome))
      .finally(() => {
        this.#inflight.set(p.platform, this.#inflight.get(p.platform)! - 1);
        const n = (this.#perUser.get(row.userId) ?? 1) - 1;
        if (n > 0) this.#perUser.set(row.userId, n);
        else this.#perUser.delete(row.userId);
        if (!this.#busy()) for (const r of this.#idle.splice(0)) r();
        void this.#pump(p);
      });
  }

  #record(platform: Platform, row: Claimed, outcome: Outcome): void {
    switch (outcome.kind) {
      case 'sent':
        this.counts.sent++;
        this.#done.push(row.id);
        break;
      case 'dead':
        this.counts.removedDevices += this.#dead.has(row.deviceId) ? 0 : 1;
        this.#dead.add(row.deviceId);
        this.#fail(platform, row, outcome.reason);
        break;
      case 'retry':
        if (row.attempts < this.#o.maxAttempts) {
          this.counts.retried++;
          this.#later.push({ id: row.id, attempts: row.attempts, at: Date.now() + backoffMs(row.attempts, this.#o.retryBaseMs, outcome.retryAfterMs), error: outcome.reason });
          break;
        }
        this.#fail(platform, row, `gave up after ${row.attempts} tries: ${outcome.reason}`);
        break;
      case 'failed':
        this.#fail(platform, row, outcome.reason);
    }
    if (this.#done.length + this.#later.length >= FLUSH_BATCH) void this.#flush();
    else
      this.#flushSoon ??= setTimeout(() => {
        this.#flushSoon = undefined;
        void this.#flush();
      }, FLUSH_DELAY_MS);
  }

  #fail(platform: Platform, row: Claimed, reason: string): void {
    this.counts.failed++;
    this.#done.push(row.id);
    this.failures.unshift({ at: new Date().toISOString(), platform, deviceId: row.deviceId, reason });
    if (this.failures.length > 50) this.failures.length = 50;
    this.#o.log.warn({ platform, deviceId: row.deviceId, reason }, 'push delivery failed');
  }

  /** Writes the recorded outcomes in one job; one flush at a time, the next picks up what arrived meanwhile. */
  #flush(): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => (this.#done.length + this.#later.length + this.#dead.size > 0 ? this.#flush() : undefined));
    if (this.#done.length + this.#later.length + this.#dead.size === 0) return Promise.resolve();
    const done = this.#done.splice(0);
    const later = this.#later.splice(0);
    const dead = [...this.#dead];
    this.#dead.clear();
    const { store } = this.#o;
    this.#flushing = this.#o
      .write(async (tx) => {
        await store.done(tx, done);
        for (const l of later) await store.reschedule(tx, l.id, l.attempts, l.at, l.error);
        for (const id of dead) await store.removeDevice(tx, id);
      })
      .then(
        () => {
          // Written: these rows are no longer ours to renew.
          for (const id of done) this.#held.delete(id);
          for (const l of later) this.#held.delete(l.id);
          if (later.length > 0) this.wake();
        },
        (err) => {
          // Keep them for the next flush; their leases keep other workers off meanwhile.
          this.#done.unshift(...done);
          this.#later.unshift(...later);
          for (const id of dead) this.#dead.add(id);
          this.#o.log.debug({ err }, 'push outcome write deferred');
          setTimeout(() => void this.#flush(), 100).unref();
        },
      )
      .finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }
}
