/**
 * The one serialized writer (docs/reference/rules-and-hooks.md). Every mutation — data writes, sign-up, photo metadata,
 * hook-queued and cron writes — is a job submitted here. Jobs submitted in the same turn of the
 * event loop, or while a transaction runs, are committed together in the next one (group commit), each inside its own savepoint so one
 * failing job never undoes another. A job's promise settles only after its transaction commits,
 * so a 2xx answered from it is durable. Committed changes are announced to listeners (the live
 * engine) after the commit.
 */
import { ApiError } from '../core/errors.js';
import type { Change, CommitListener } from './changes.js';
import type { Driver, Tx } from './driver.js';

const MAX_ATTEMPTS = 3;

/** A deadlock or serialization failure between concurrent batches (PostgreSQL 40P01, 40001). */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

export type WriteFn<T> = (tx: Tx, changes: Change[]) => Promise<T>;

interface Job {
  fn: WriteFn<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  changes: Change[];
}

export interface WriterOptions {
  /** Jobs allowed to wait for a transaction before new ones get 503 (default 64). */
  maxPending?: number;
  /** Most jobs committed in one transaction. */
  maxBatch?: number;
  /**
   * Transactions in flight at once (default: the driver's `maxWriters`, else 1). SQLite has one
   * writer; PostgreSQL commits batches side by side, the rows a write reads before changing
   * locked (Dialect.lockForWrite), a batch that deadlocks retried whole.
   */
  concurrency?: number;
  /** Where a commit listener's failure is reported (the server logs it). */
  onListenerError?: (err: unknown) => void;
}

export class WriteQueue {
  #driver: Driver;
  #queue: Job[] = [];
  #lanes = 0;
  #concurrency: number;
  #listeners: CommitListener[] = [];
  #maxPending: number;
  #maxBatch: number;
  #rejected = 0;
  #idle: (() => void)[] = [];
  /** Lanes reserved but not yet started (their setImmediate is pending). */
  #starting: NodeJS.Immediate[] = [];
  #onListenerError: (err: unknown) => void;

  constructor(driver: Driver, options: WriterOptions = {}) {
    this.#driver = driver;
    this.#maxPending = options.maxPending ?? 64;
    this.#maxBatch = options.maxBatch ?? 256;
    this.#concurrency = Math.max(1, options.concurrency ?? driver.maxWriters ?? 1);
    this.#onListenerError = options.onListenerError ?? (() => {});
  }

  /** Jobs waiting for a transaction (the one running excluded). */
  get pending(): number {
    return this.#queue.length;
  }
  get rejected(): number {
    return this.#rejected;
  }

  onCommit(listener: CommitListener): void {
    this.#listeners.push(listener);
  }

  /** Queues a write. Fails at once with 503 WRITE_QUEUE_FULL when `maxPending` jobs are waiting. */
  submit<T>(fn: WriteFn<T>): Promise<T> {
    if (this.#queue.length >= this.#maxPending) {
      this.#rejected++;
      return Promise.reject(new ApiError('WRITE_QUEUE_FULL', undefined, { headers: { 'Retry-After': '1' } }));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ fn: fn as WriteFn<unknown>, resolve: resolve as (v: unknown) => void, reject, changes: [] });
      if (this.#lanes < this.#concurrency) {
        this.#lanes++;
        // Start once this turn of the event loop has read its other requests (setImmediate runs
        // right after the poll phase, no timer): their writes share the transaction. A start in a
        // microtask committed each HTTP write alone, since a SQLite job runs to its COMMIT before
        // node reads the next request (measured, issue #24 item 5: a batch of 1 under 50
        // concurrent creates, and BEGIN/COMMIT the largest cost of a create).
        const start: NodeJS.Immediate = setImmediate(() => {
          this.#starting.splice(this.#starting.indexOf(start), 1);
          void this.#drain();
        });
        this.#starting.push(start);
      } else if (this.#starting.length > 0 && this.#queue.length >= this.#maxPending) {
        // A full queue that no transaction has started on yet starts now, rather than refusing
        // writes that are waiting only for the end of the turn: the bound stays `maxPending` jobs
        // waiting behind a running transaction.
        for (const start of this.#starting.splice(0)) {
          clearImmediate(start);
          queueMicrotask(() => void this.#drain());
        }
      }
    });
  }

  /** Resolves once nothing is queued or running (graceful shutdown). */
  whenIdle(): Promise<void> {
    if (this.#lanes === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      await this.#commit(batch);
    }
    if (--this.#lanes === 0) for (const r of this.#idle.splice(0)) r();
  }

  async #commit(batch: Job[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const done = await this.#attempt(batch, attempt < MAX_ATTEMPTS);
      if (done) return;
      for (const job of batch) job.changes.length = 0;
    }
  }

  /** One try at committing `batch`; false when it deadlocked and may run again (nothing committed). */
  async #attempt(batch: Job[], mayRetry: boolean): Promise<boolean> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await this.#driver.transaction(async (tx) => {
        if (batch.length === 1) {
          // One job: the transaction itself is its savepoint; its failure rolls everything back.
          const job = batch[0]!;
          outcomes.push({ ok: true, value: await job.fn(tx, job.changes) });
          return;
        }
        for (const job of batch) {
          await tx.savepoint('job');
          try {
            const value = await job.fn(tx, job.changes);
            await tx.release('job');
            outcomes.push({ ok: true, value });
          } catch (error) {
            await tx.rollbackTo('job');
            await tx.release('job');
            job.changes.length = 0;
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      if (mayRetry && this.#concurrency > 1 && isRetryable(error)) return false;
      // The single job failed, or COMMIT itself failed: nothing of this batch is durable.
      for (const job of batch) job.reject(error);
      return true;
    }
    const changes: Change[] = [];
    batch.forEach((job, i) => {
      const o = outcomes[i]!;
      if (o.ok) {
        changes.push(...job.changes);
        job.resolve(o.value);
      } else job.reject(o.error);
    });
    if (changes.length > 0) {
      for (const l of this.#listeners) {
        // A listener's failure must never stall the writer: the writes are already committed.
        try {
          l(changes);
        } catch (err) {
          this.#onListenerError(err);
        }
      }
    }
    return true;
  }
}
