/**
 * The main thread's half of following the WAL for continuous backup (docs/reference/backups.md;
 * the other half, WalFollower in wal.ts, reads and ships on a worker thread):
 *
 * - a connection of our own holding a **read transaction**, so no checkpoint (ours, another
 *   process's) restarts the WAL past frames the follower has not copied;
 * - a **mark** after every commit of this process: the WAL's size and the time (one fstat), kept
 *   in two arrays and handed to the follower in batches (once per sync, not a message per commit);
 * - **our checkpoint** (TRUNCATE), synchronous, between two writes of this process.
 *
 * Why the checkpoint is safe although the follower runs elsewhere: the follower reports where it
 * stopped reading (`WalEnd`: a byte offset just past its last committed frame, and the epoch's
 * salts). The checkpoint runs only when, in the same synchronous step on the thread that owns the
 * writer, the WAL still has those salts and either ends exactly there or ends exactly at the mark
 * of this process's last commit. In the second case every byte between was committed before our
 * last COMMIT returned (a transaction's frames follow the last committed frame, so nothing
 * uncommitted lies below a commit of ours, and the size has not moved since): we copy those bytes
 * (the *tail*, usually a few KB written since the follower's read) and hand them to the follower
 * before anything else it is asked, so every frame a TRUNCATE removes was either read by the
 * follower or is in the tail. No write of this process can fall between the check and the
 * checkpoint (both run in one synchronous step); a write of another process in those microseconds
 * is the one window left (see "Limits" in the docs).
 */
import Database from 'better-sqlite3';
import { closeSync, fstatSync, openSync } from 'node:fs';
import { readAt, type WalEnd } from './wal.js';
import { FRAME_HEADER_BYTES, parseWalHeader, WAL_HEADER_BYTES } from './wal-format.js';

/** A larger tail is not copied on the main thread: the checkpoint waits for the follower's next read. */
const MAX_TAIL_BYTES = 8 * 1024 * 1024;

export interface CheckpointResult {
  /** Bytes of committed frames past the follower's end, copied before the checkpoint. */
  readonly tail: Buffer;
  /** The marks of the commits in the tail (and every mark noted before the checkpoint). */
  readonly marks: { sizes: Float64Array; times: Float64Array };
  /** The WAL was emptied (false: busy; it may still restart on the next write, losing nothing). */
  readonly truncated: boolean;
}

export class WalGuard {
  readonly file: string;
  #db: Database.Database;
  #fd: number;
  #holding = false;
  #sizes: number[] = [];
  #times: number[] = [];

  constructor(dbFile: string) {
    this.file = dbFile;
    this.#db = new Database(dbFile);
    // Never wait on a lock: this runs on the event loop; a busy checkpoint is simply retried later.
    this.#db.pragma('busy_timeout = 0');
    this.#db.pragma('wal_autocheckpoint = 0');
    this.#fd = openSync(`${dbFile}-wal`, 'a+');
    this.#hold();
  }

  #hold(): void {
    this.#db.exec('BEGIN');
    this.#db.prepare('SELECT count(*) FROM sqlite_master').get();
    this.#holding = true;
  }
  #release(): void {
    if (this.#holding) this.#db.exec('COMMIT');
    this.#holding = false;
  }

  /**
   * Called right after each commit of this process (synchronously, before its answer): notes the
   * WAL's size and the time, one fstat. The follower dates each commit by the first mark at or
   * past its end.
   */
  noteCommit(t = Date.now()): void {
    this.#sizes.push(fstatSync(this.#fd).size);
    this.#times.push(t);
  }

  /** When the oldest commit not yet handed over happened (for the lag metric). */
  get oldestMark(): number | undefined {
    return this.#times[0];
  }

  /** The marks noted since the last call, for the follower (its next read dates commits by them). */
  takeMarks(): { sizes: Float64Array; times: Float64Array } {
    const m = { sizes: Float64Array.from(this.#sizes), times: Float64Array.from(this.#times) };
    this.#sizes = [];
    this.#times = [];
    return m;
  }

  /** WAL bytes on disk (to decide when a checkpoint is worth it). */
  walBytes(): number {
    return fstatSync(this.#fd).size;
  }

  /**
   * Checkpoints (TRUNCATE) if every committed frame of the WAL is either read by the follower
   * (through `end`) or copied here now (see the top of this file). Null when it may not (the WAL
   * moved in a way we cannot vouch for: the follower reads again first); otherwise the tail and
   * marks to hand to the follower (WalFollower.appendTail) before it reads the WAL again.
   */
  checkpoint(end: WalEnd): CheckpointResult | null {
    const size = fstatSync(this.#fd).size;
    let tail: Buffer = Buffer.alloc(0);
    // Emptied since the follower read frames of it: by another process's checkpoint, which may
    // have taken frames we never read. Not ours to seal: the follower will call it lost.
    if (size < WAL_HEADER_BYTES && end.end !== 0) return null;
    if (size >= WAL_HEADER_BYTES) {
      const h = parseWalHeader(this.#read(0, WAL_HEADER_BYTES));
      if (!h) return null;
      if (end.end === 0 || h.salt1 !== end.salt1 || h.salt2 !== end.salt2) return null;
      if (size !== end.end) {
        const lastMark = this.#sizes.at(-1);
        const fsize = FRAME_HEADER_BYTES + end.pageSize;
        if (size < end.end || size !== lastMark || (size - end.end) % fsize !== 0 || size - end.end > MAX_TAIL_BYTES) return null;
        tail = this.#read(end.end, size - end.end);
        if (tail.length !== size - end.end) return null;
      }
    }
    const marks = this.takeMarks();
    this.#release();
    try {
      const r = this.#db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return { tail, marks, truncated: r[0]?.busy === 0 };
    } finally {
      this.#hold();
    }
  }

  #read(offset: number, length: number): Buffer {
    return readAt(this.#fd, offset, length, true);
  }

  close(): void {
    try {
      this.#release();
    } finally {
      closeSync(this.#fd);
      this.#db.close();
    }
  }
}
