/**
 * Following a live SQLite WAL for continuous backup (docs/reference/backups.md), the way
 * Litestream does: a connection of our own holds a read transaction, which stops any checkpoint
 * (ours, the server's, another process's) from restarting the WAL past frames we have not copied;
 * new committed frames are read straight from the `-wal` file (checked by salt and checksum), and
 * only once they are safe at the destination do we checkpoint ourselves. The server's own
 * automatic checkpoints are turned off while this runs (SqliteDriver.setAutoCheckpoint).
 *
 * Epochs: every time the WAL restarts (new salts) a new epoch begins; frames are numbered from 1
 * within an epoch. A restore replays a snapshot's epoch from frame 1 (see wal-restore.ts).
 */
import Database from 'better-sqlite3';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { frameBytes, parseWalHeader, scanFrames, WAL_HEADER_BYTES, type WalHeader } from './wal-format.js';

export interface WalCommit {
  readonly epoch: number;
  /** The commit frame (1-based within the epoch). */
  readonly frame: number;
  /** When we saw it committed (ms since the epoch): right after COMMIT for this process's writes. */
  readonly t: number;
}

export interface WalPosition {
  readonly epoch: number;
  readonly frame: number;
}

export class WalFollower {
  readonly file: string;
  #db: Database.Database;
  #fd: number;
  #holding = false;
  #header: WalHeader | null = null;
  #headerBytes: Buffer | null = null;
  #epoch = 0;
  #frames = 0;
  #sum: readonly [number, number] = [0, 0];
  /** Set by our own checkpoint: a restart of the WAL after it loses nothing of ours. */
  #sealed = true;
  /** The file holds a valid header for the current epoch (false: empty, the next write starts one). */
  #live = false;
  /** A restart we did not cause: frames may be missing, the backup needs a new generation. */
  lost = false;
  /** Captured commits not yet acknowledged by the shipper, oldest first. */
  readonly commits: WalCommit[] = [];
  /** WAL sizes right after this process's commits, with their times, not yet scanned. */
  #marks: { size: number; t: number }[] = [];

  constructor(dbFile: string) {
    this.file = dbFile;
    this.#db = new Database(dbFile);
    // Never wait on a lock: this runs on the event loop; a busy checkpoint is simply retried later.
    this.#db.pragma('busy_timeout = 0');
    this.#db.pragma('wal_autocheckpoint = 0');
    this.#fd = openSync(`${dbFile}-wal`, 'a+');
    this.#hold();
  }

  get epoch(): number {
    return this.#epoch;
  }
  get frames(): number {
    return this.#frames;
  }
  /** The 32-byte header of the current epoch (segments carry it so a restore can rebuild the WAL). */
  get headerBytes(): Buffer | null {
    return this.#headerBytes;
  }
  get pageSize(): number {
    return this.#header?.pageSize ?? 4096;
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

  #read(offset: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.#fd, buf, done, length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return buf.subarray(0, done);
  }

  /**
   * Called right after each commit of this process (synchronously, before its answer): notes the
   * WAL's size and the time, one fstat. The frames are read by the next scan, which dates each
   * commit by the first mark at or past its end.
   */
  noteCommit(t = Date.now()): void {
    this.#marks.push({ size: fstatSync(this.#fd).size, t });
  }

  /** When the oldest commit not yet scanned happened (for the lag metric). */
  get oldestUnscanned(): number | undefined {
    return this.#marks[0]?.t;
  }

  /** Reads newly committed frames; commits no mark covers get time `t`. Synchronous (new bytes only). */
  scan(t = Date.now()): void {
    const marks = this.#marks;
    this.#marks = [];
    const size = fstatSync(this.#fd).size;
    this.#live = false;
    if (size < WAL_HEADER_BYTES) return;
    const headerBytes = this.#read(0, WAL_HEADER_BYTES);
    const h = parseWalHeader(headerBytes);
    if (!h) return;
    this.#live = true;
    if (!this.#header || h.salt1 !== this.#header.salt1 || h.salt2 !== this.#header.salt2) {
      if (!this.#sealed) this.lost = true;
      this.#header = h;
      this.#headerBytes = Buffer.from(headerBytes);
      this.#epoch++;
      this.#frames = 0;
      this.#sum = h.checksum;
    }
    const fsize = frameBytes(h);
    const offset = WAL_HEADER_BYTES + this.#frames * fsize;
    if (size - offset < fsize) return;
    const buf = this.#read(offset, Math.floor((size - offset) / fsize) * fsize);
    const trusted = Math.max(0, (marks.at(-1)?.size ?? 0) - offset);
    const s = scanFrames(buf, h, this.#sum, trusted);
    if (s.committedFrames === 0) return;
    let m = 0;
    for (const i of s.commitFrames) {
      const end = offset + (i + 1) * fsize;
      while (m < marks.length && marks[m]!.size < end) m++;
      this.commits.push({ epoch: this.#epoch, frame: this.#frames + i + 1, t: marks[m]?.t ?? t });
    }
    this.#frames += s.committedFrames;
    this.#sum = s.checksum;
    this.#sealed = false;
  }

  /** Frames `from..to` (1-based, inclusive) of the current epoch, as stored in the WAL. */
  readFrames(from: number, to: number): Buffer {
    const fsize = frameBytes(this.#header!);
    const want = (to - from + 1) * fsize;
    const buf = this.#read(WAL_HEADER_BYTES + (from - 1) * fsize, want);
    if (buf.length !== want) throw new Error('the WAL is shorter than the frames it announced');
    return buf;
  }

  /**
   * Where a snapshot of the database file taken now starts: replaying `epoch` from frame 1 through
   * at least `frame` over it gives a consistent state. An empty WAL means the next epoch.
   */
  position(): WalPosition {
    this.scan();
    return this.#live ? { epoch: this.#epoch, frame: this.#frames } : { epoch: this.#epoch + 1, frame: 0 };
  }

  /** WAL bytes on disk (to decide when a checkpoint is worth it). */
  walBytes(): number {
    return fstatSync(this.#fd).size;
  }

  /**
   * Checkpoints (TRUNCATE) once every captured frame is shipped (`shippedThrough` = the frame the
   * destination holds in the current epoch). Synchronous from the last scan to the new read
   * transaction, so no write of this process falls between. True when the WAL was emptied.
   */
  checkpoint(shippedThrough: WalPosition): boolean {
    this.scan();
    if (shippedThrough.epoch !== this.#epoch || shippedThrough.frame !== this.#frames) return false;
    this.#release();
    try {
      const r = this.#db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number }[];
      this.#sealed = true;
      return r[0]?.busy === 0;
    } finally {
      this.#hold();
    }
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
