/**
 * The main thread's half of following the WAL for continuous backup (docs/reference/backups.md;
 * the other half, WalFollower in wal.ts, reads and ships on a worker thread):
 *
 * - a connection of our own holding a **read transaction**, so no checkpoint (ours, another
 *   process's) restarts the WAL past frames the follower has not copied;
 * - a **mark** after every commit of this process: where the WAL's committed frames end (from the
 *   WAL index, one read) and the time, kept in two arrays and handed to the follower in batches
 *   (once per sync, not a message per commit);
 * - **our checkpoint** (RESTART), synchronous, between two writes of this process; the frames'
 *   copy into the database file (backfill) mostly done before it on the worker thread, after
 *   `advance` moved the read transaction forward (wal-backfill.ts).
 *
 * Why the checkpoint is safe although the follower runs elsewhere: the follower reports where it
 * stopped reading (`WalEnd`: a byte offset just past its last committed frame, and the epoch's
 * salts). The checkpoint runs only when, in the same synchronous step on the thread that owns the
 * writer, the WAL still has those salts and either ends exactly there or ends exactly at the mark
 * of this process's last commit. In the second case every byte between was committed before our
 * last COMMIT returned (a transaction's frames follow the last committed frame, so nothing
 * uncommitted lies below a commit of ours, and the committed end has not moved since): we copy those bytes
 * (the *tail*, usually a few KB written since the follower's read) and hand them to the follower
 * before anything else it is asked, so every frame the restart lets the next write overwrite was either read by the
 * follower or is in the tail. No write of this process can fall between the check and the
 * checkpoint (both run in one synchronous step). A write of another process in those microseconds
 * is found by the checkpoint itself: RESTART reports how many frames it moved (read under the
 * writer lock it holds while it runs), and until the next write the WAL still holds them, so the
 * frames past what we checked are read right away and go with the tail. The follower checks them
 * (salts, checksums) and the frame count the result names; a mismatch (another process already
 * wrote over them) makes the backup start a new generation rather than miss a commit.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { readAt, WalIndexFile, type WalEnd } from './wal.js';
import { committedEnd, FRAME_HEADER_BYTES } from './wal-format.js';

/** A larger tail is not copied on the main thread: the checkpoint waits for the follower's next read. */
const MAX_TAIL_BYTES = 8 * 1024 * 1024;

export interface CheckpointResult {
  /** Bytes of committed frames past the follower's end, copied before the checkpoint. */
  readonly tail: Buffer;
  /** The marks of the commits in the tail (and every mark noted before the checkpoint). */
  readonly marks: { sizes: Float64Array; times: Float64Array };
  /** Every frame is in the database file and no reader holds the WAL: the next write starts it over (false: busy). */
  readonly restarted: boolean;
  /** Frames of the epoch the follower must hold once it has taken the tail (fewer: some were lost). */
  readonly frames: number;
}

export interface WalGuardOptions {
  /** Runs between the check and the checkpoint: lets a test put another process's commit in that window. */
  readonly afterCheck?: () => void;
}

export class WalGuard {
  readonly file: string;
  #db: Database.Database;
  #fd: number;
  /** The WAL index (`-shm`), read for the marks: SQLite's own count of committed frames. */
  #index: WalIndexFile;
  #holding = false;
  #sizes: number[] = [];
  #times: number[] = [];
  #afterCheck: (() => void) | undefined;

  constructor(dbFile: string, options: WalGuardOptions = {}) {
    this.file = dbFile;
    this.#afterCheck = options.afterCheck;
    this.#db = new Database(dbFile);
    // Never wait on a lock: this runs on the event loop; a busy checkpoint is simply retried later.
    this.#db.pragma('busy_timeout = 0');
    this.#db.pragma('wal_autocheckpoint = 0');
    this.#fd = openSync(`${dbFile}-wal`, 'a+');
    this.#hold();
    this.#index = new WalIndexFile(dbFile);
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
   * Moves the read transaction to the WAL's current end, so a backfill (WalBackfill, on the
   * worker thread) may copy every frame committed so far into the database file. The read still
   * holds the WAL from starting over: the frames stay there for the follower. Call it only while
   * no backfill of ours runs and no snapshot reads the file (the caller's queue sees to it): a
   * backfill racing this instant could copy every frame, and a read begun on a fully copied WAL
   * no longer holds it (the next write would start it over, under the follower).
   */
  advance(): void {
    this.#release();
    this.#hold();
  }

  /**
   * Called right after each commit of this process (synchronously, before its answer): notes
   * where the WAL's committed frames end and the time, one read of the WAL index header into a
   * buffer reused (not the file's size: the WAL is reused in place, see checkpoint). The follower
   * dates each commit by the first mark at or past its end. An index caught mid-update by another
   * process (never after our own commit, on this thread) notes nothing: that commit is then dated
   * by a later mark or the sync's time.
   */
  noteCommit(t = Date.now()): void {
    const ix = this.#index.read();
    if (!ix) return;
    this.#sizes.push(committedEnd(ix));
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

  /**
   * Checkpoints (RESTART) if every committed frame of the WAL is either read by the follower
   * (through `end`) or copied here now (see the top of this file). Null when it may not (the WAL
   * moved in a way we cannot vouch for: the follower reads again first); otherwise the tail and
   * marks to hand to the follower (WalFollower.appendTail) before it reads the WAL again.
   *
   * RESTART, not TRUNCATE: SQLite then starts the WAL over from its first frame at the next write,
   * in place, as its own checkpoints do. Truncating it freed its pages every cycle and the next
   * writes allocated them again (page cache, ext4 block reservation, inode updates): 4–5% of the
   * main thread's samples under a create load (`perf`, docs/reference/backups.md). Which frames
   * are committed is read from the WAL index (SQLite's own mxFrame), not the file's size, which a
   * reused WAL no longer tells.
   */
  checkpoint(end: WalEnd): CheckpointResult | null {
    const ix = this.#index.read();
    // Nothing committed since a restart (or the index is being written): nothing to checkpoint, and
    // an emptied WAL the follower had frames of may have lost some: not ours to seal.
    if (!ix || ix.frames === 0) return null;
    if (end.end === 0 || ix.salt1 !== end.salt1 || ix.salt2 !== end.salt2) return null;
    const committed = committedEnd(ix);
    const fsize = FRAME_HEADER_BYTES + ix.pageSize;
    let tail: Buffer = Buffer.alloc(0);
    if (committed !== end.end) {
      const lastMark = this.#sizes.at(-1);
      if (committed < end.end || committed !== lastMark || (committed - end.end) % fsize !== 0 || committed - end.end > MAX_TAIL_BYTES) return null;
      tail = this.#read(end.end, committed - end.end);
      if (tail.length !== committed - end.end) return null;
    }
    const marks = this.takeMarks();
    this.#release();
    try {
      this.#afterCheck?.();
      const r = (this.#db.pragma('wal_checkpoint(RESTART)') as { busy: number; log: number }[])[0];
      const restarted = r?.busy === 0;
      // Frames the checkpoint moved past what we checked: another process committed in between.
      const moved = restarted ? r.log : ix.frames;
      if (moved > ix.frames) {
        const extra = (moved - ix.frames) * fsize;
        // Past the bound: not read here; the follower then falls short of `frames` (a new generation).
        if (tail.length + extra <= MAX_TAIL_BYTES) tail = Buffer.concat([tail, this.#read(committed, extra)]);
      }
      return { tail, marks, restarted, frames: moved };
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
      this.#index.close();
      this.#db.close();
    }
  }
}
