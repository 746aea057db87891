/**
 * Following a live SQLite WAL for continuous backup (docs/reference/backups.md), the way
 * Litestream does. Two halves, because the reading and shipping run on a worker thread while the
 * writer serves requests on the main thread:
 *
 * - `WalGuard` (wal-guard.ts, main thread): a connection of our own holding a read transaction,
 *   which stops any checkpoint from restarting the WAL past frames we have not copied; one read
 *   of the WAL index per commit of this process (a *mark*: where the committed frames end, and
 *   the time); and our own checkpoint, after which SQLite reuses the WAL file in place.
 * - `WalFollower` (here, worker thread): reads new committed frames straight from the `-wal` file
 *   once each (checked by salt and checksum), dates each commit by the marks it is sent, and keeps
 *   the bytes it read so the shipper need not read them again.
 *
 * Epochs: every time the WAL restarts (new salts) a new epoch begins; frames are numbered from 1
 * within an epoch. A restore replays a snapshot's epoch from frame 1 (see wal-restore.ts).
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { committedEnd, FRAME_HEADER_BYTES, frameBytes, parseWalHeader, parseWalIndex, scanFrames, WAL_HEADER_BYTES, WAL_INDEX_HEADER_BYTES, type WalHeader, type WalIndex } from './wal-format.js';

/**
 * `length` bytes of the file at `offset`, fewer at its end. `unpooled` for bytes handed to
 * another thread: a pooled Buffer shares its memory with others and cannot be transferred.
 * `into`: read into that buffer (at least `length` bytes) rather than a new one.
 */
export function readAt(fd: number, offset: number, length: number, unpooled = false, into?: Buffer): Buffer {
  const buf = into ?? (unpooled ? Buffer.allocUnsafeSlow(length) : Buffer.allocUnsafe(length));
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

/**
 * Memory the follower reads new frames into, reused once nothing read into it is held any more
 * (the shipper calls WalFollower.recycle after uploading everything). On this VM a page fault
 * costs ~10–20 µs of CPU (measured: fresh memory cost 1–2.5 ms per MB read, reused 0.05–0.2), so
 * the arena is reserved once at its bound and never replaced: the kernel gives it pages as reads
 * first reach them (allocUnsafeSlow does not touch memory), so it faults once per 4 KB up to the
 * most ever held (a sync's WAL, a checkpoint's copy plus the next read) and never again. Growing
 * it by doubling instead faulted every page of each new size once more, and a read that did not
 * fit went to fresh memory: 0.35–0.7 faults per create at 8 connections (backup-profile's `pf`).
 */
class ReadArena {
  #buf: Buffer | null = null;
  #used = 0;

  /** `n` bytes: in the arena when they fit, else fresh memory (the arena is held, or `n` is over the bound). */
  take(n: number): Buffer {
    const buf = (this.#buf ??= Buffer.allocUnsafeSlow(MAX_ARENA_BYTES));
    if (this.#used + n > buf.length) return Buffer.allocUnsafe(n);
    const out = buf.subarray(this.#used, this.#used + n);
    this.#used += n;
    return out;
  }

  /** Gives back the end of the last `take` (frames not committed yet: read again next time, adjacent). */
  keep(b: Buffer, bytes: number): void {
    const buf = this.#buf;
    if (buf && b.buffer === buf.buffer && b.byteOffset + b.length === buf.byteOffset + this.#used) this.#used -= b.length - bytes;
  }

  /** Nothing taken is held any more. */
  reset(): void {
    this.#used = 0;
  }
}

/** The arena's size: address space reserved, memory only as used (a larger read, a slow destination: fresh memory). */
const MAX_ARENA_BYTES = 64 * 1024 * 1024;

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

/** WAL sizes right after commits of the serving process, with their times (ms), oldest first. */
export interface WalMarks {
  readonly sizes: ArrayLike<number>;
  readonly times: ArrayLike<number>;
}

/** Where the follower has read to: what the main thread compares the WAL against before a checkpoint. */
export interface WalEnd {
  /** Byte offset in the `-wal` file just past the last committed frame read (0: nothing read in this epoch). */
  readonly end: number;
  readonly salt1: number;
  readonly salt2: number;
  readonly pageSize: number;
}

/**
 * The WAL index (`-shm`) of a database, read for its header: SQLite's own count of committed
 * frames and the epoch's salts (wal-format.ts, parseWalIndex). Opened on the first read that finds
 * it; each read goes into one reused buffer (the guard reads it after every commit).
 */
export class WalIndexFile {
  #file: string;
  #fd: number | null = null;
  #buf = Buffer.alloc(WAL_INDEX_HEADER_BYTES);

  constructor(dbFile: string) {
    this.#file = `${dbFile}-shm`;
  }

  /** The header now, or null (no index yet, or caught mid-update by a writer). */
  read(): WalIndex | null {
    if (this.#fd === null) {
      try {
        this.#fd = openSync(this.#file, 'r');
      } catch {
        return null;
      }
    }
    const n = readSync(this.#fd, this.#buf, 0, WAL_INDEX_HEADER_BYTES, 0);
    return n === WAL_INDEX_HEADER_BYTES ? parseWalIndex(this.#buf) : null;
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/** Committed frames as read, kept for the shipper: frames `from..to` of `epoch`. */
interface Captured {
  epoch: number;
  from: number;
  to: number;
  parts: Buffer[];
  bytes: number;
}

/** Captured bytes beyond this are dropped (and read again from the WAL when copied): bounded memory. */
const MAX_CAPTURED_BYTES = 64 * 1024 * 1024;

export class WalFollower {
  readonly file: string;
  #fd: number;
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
  /** Marks not yet used by a scan. */
  #marks: { size: number; t: number }[] = [];
  #captured: Captured | null = null;
  #arena = new ReadArena();
  #index: WalIndexFile;

  constructor(dbFile: string) {
    this.file = dbFile;
    // 'a+': the file may not exist yet (SQLite creates it on the first write); we only read it.
    this.#fd = openSync(`${dbFile}-wal`, 'a+');
    this.#index = new WalIndexFile(dbFile);
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
  /** Where reading stopped (the main thread checkpoints only if the WAL still ends there, or its own commits follow). */
  get end(): WalEnd {
    const h = this.#header;
    return { end: h && this.#live ? WAL_HEADER_BYTES + this.#frames * frameBytes(h) : 0, salt1: h?.salt1 ?? 0, salt2: h?.salt2 ?? 0, pageSize: this.pageSize };
  }

  #read(offset: number, length: number): Buffer {
    return readAt(this.#fd, offset, length);
  }

  /** Marks noted by the main thread (WalGuard.noteCommit), in order. */
  noteMarks(m: WalMarks): void {
    for (let i = 0; i < m.sizes.length; i++) this.#marks.push({ size: m.sizes[i]!, t: m.times[i]! });
  }

  /** When the oldest commit not yet scanned happened (for the lag metric). */
  get oldestUnscanned(): number | undefined {
    return this.#marks[0]?.t;
  }

  /** Reads newly committed frames once; commits no mark covers get time `t`. Synchronous (new bytes only). */
  scan(t = Date.now()): void {
    const size = fstatSync(this.#fd).size;
    this.#live = false;
    if (size < WAL_HEADER_BYTES) {
      this.#marks = [];
      return;
    }
    const headerBytes = this.#read(0, WAL_HEADER_BYTES);
    const h = parseWalHeader(headerBytes);
    if (!h) {
      this.#marks = [];
      return;
    }
    this.#live = true;
    if (!this.#header || h.salt1 !== this.#header.salt1 || h.salt2 !== this.#header.salt2) {
      if (!this.#sealed) this.lost = true;
      this.#header = h;
      this.#headerBytes = Buffer.from(headerBytes);
      this.#epoch++;
      this.#frames = 0;
      this.#sum = h.checksum;
      this.#captured = null;
    }
    const fsize = frameBytes(h);
    const offset = WAL_HEADER_BYTES + this.#frames * fsize;
    // The WAL is reused in place (RESTART checkpoints): past its committed frames lie stale ones of
    // earlier epochs, refused by their salts but costly to read every time. The index says where
    // the committed frames of this epoch end; an index of other salts (a restart being written) or
    // caught mid-update: the whole file, checked frame by frame as before.
    const ix = this.#index.read();
    const limit = ix && ix.salt1 === h.salt1 && ix.salt2 === h.salt2 ? Math.min(size, committedEnd(ix)) : size;
    if (limit - offset < fsize) {
      this.#marks = [];
      return;
    }
    const want = Math.floor((limit - offset) / fsize) * fsize;
    this.#take(readAt(this.#fd, offset, want, false, this.#arena.take(want)), offset, t);
  }

  /**
   * Nothing read so far is held by the caller any more (every frame read was uploaded): the next
   * reads reuse the same memory. Bytes still captured but not copied keep it held.
   */
  recycle(): void {
    if (!this.#captured) this.#arena.reset();
  }

  /**
   * Frames the main thread copied out of the WAL right before its checkpoint (WalGuard.checkpoint),
   * starting exactly where this follower stopped, all committed by this process: read as if
   * scanned. The WAL may restart after this without losing anything: sealed.
   */
  appendTail(tail: Buffer, marks: WalMarks, t = Date.now()): void {
    this.noteMarks(marks);
    const h = this.#header;
    if (h && this.#live && tail.length > 0) this.#take(tail, WAL_HEADER_BYTES + this.#frames * frameBytes(h), t);
    this.#marks = [];
    this.#sealed = true;
  }

  /** Checks and keeps committed frames of `buf` (read at `offset` of the current epoch); dates their commits. */
  #take(buf: Buffer, offset: number, t: number): void {
    const h = this.#header!;
    const fsize = frameBytes(h);
    const marks = this.#marks;
    const trusted = Math.max(0, (marks.at(-1)?.size ?? 0) - offset);
    const s = scanFrames(buf, h, this.#sum, trusted);
    const dates = this.#date(
      s.commitFrames.map((i) => offset + (i + 1) * fsize),
      t,
    );
    this.#arena.keep(buf, s.committedFrames * fsize);
    if (s.committedFrames === 0) return;
    const from = this.#frames + 1;
    for (let k = 0; k < s.commitFrames.length; k++) this.commits.push({ epoch: this.#epoch, frame: this.#frames + s.commitFrames[k]! + 1, t: dates[k]! });
    this.#frames += s.committedFrames;
    this.#sum = s.checksum;
    this.#sealed = false;
    const data = buf.subarray(0, s.committedFrames * fsize);
    const c = this.#captured;
    if (c && c.epoch === this.#epoch && c.to + 1 === from && c.bytes + data.length <= MAX_CAPTURED_BYTES) {
      const last = c.parts.at(-1)!;
      // Consecutive reads into the arena lie side by side: one part, no copy when shipped.
      if (last.buffer === data.buffer && last.byteOffset + last.length === data.byteOffset) c.parts[c.parts.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + data.length);
      else c.parts.push(data);
      c.to = this.#frames;
      c.bytes += data.length;
    } else if (!c && data.length <= MAX_CAPTURED_BYTES) {
      this.#captured = { epoch: this.#epoch, from, to: this.#frames, parts: [data], bytes: data.length };
    } else {
      this.#captured = null; // over the bound or not contiguous: copy() reads the WAL again
    }
  }

  /** Dates commits ending at `ends` by the first mark at or past each (else `t`); every mark is then used up. */
  #date(ends: number[], t: number): number[] {
    const marks = this.#marks;
    this.#marks = [];
    let m = 0;
    return ends.map((end) => {
      while (m < marks.length && marks[m]!.size < end) m++;
      return marks[m]?.t ?? t;
    });
  }

  /**
   * Frames `from..to` (1-based, inclusive) of the current epoch: from what the last scans read
   * when they hold them, otherwise read from the WAL (a new generation starting over an epoch).
   */
  readFrames(from: number, to: number): Buffer {
    const fsize = frameBytes(this.#header!);
    const c = this.#captured;
    if (c && c.epoch === this.#epoch && c.from <= from && c.to >= to) {
      const all = c.parts.length === 1 ? c.parts[0]! : Buffer.concat(c.parts);
      return all.subarray((from - c.from) * fsize, (to - c.from + 1) * fsize);
    }
    const want = (to - from + 1) * fsize;
    const buf = this.#read(WAL_HEADER_BYTES + (from - 1) * fsize, want);
    if (buf.length !== want) throw new Error('the WAL is shorter than the frames it announced');
    return buf;
  }

  /** Drops what was read through `frame` of the current epoch (it is copied). */
  release(frame: number): void {
    const c = this.#captured;
    if (c && (c.epoch !== this.#epoch || c.to <= frame)) this.#captured = null;
  }

  /**
   * Where a snapshot of the database file taken now starts: replaying `epoch` from frame 1 through
   * at least `frame` over it gives a consistent state. An empty WAL means the next epoch.
   */
  position(): WalPosition {
    this.scan();
    return this.#live ? { epoch: this.#epoch, frame: this.#frames } : { epoch: this.#epoch + 1, frame: 0 };
  }

  /**
   * WAL bytes in use since it last started over (to decide when a checkpoint is worth it). Not only
   * the frames left to copy into the database file: the backfill on the worker thread copies most
   * of them ahead of our checkpoint, but only the checkpoint lets the writer reuse the WAL.
   */
  walBytes(): number {
    const ix = this.#index.read();
    if (!ix) return fstatSync(this.#fd).size;
    return ix.frames * (FRAME_HEADER_BYTES + ix.pageSize);
  }

  close(): void {
    closeSync(this.#fd);
    this.#index.close();
  }
}
