/**
 * Shipping the WAL to the destination (docs/reference/backups.md), run on the backup's worker
 * thread (wal-thread.ts) so none of it costs the event loop that serves requests and runs the
 * writer: reading new frames (once each), checking them, sha256, writing segments and their
 * manifests. The main thread only notes marks, orchestrates, and checkpoints (wal-guard.ts).
 */
import { WalFollower, type WalEnd, type WalMarks, type WalPosition } from '../storage/sqlite/wal.js';
import type { Destination } from './destination.js';
import { keys, sealManifest, sha256, type SegmentManifest } from './layout.js';

/** Copied frames held in memory before we stop copying (the WAL then keeps them, not checkpointed). */
export const MAX_PENDING_BYTES = 256 * 1024 * 1024;

interface Pending {
  readonly epoch: number;
  readonly from: number;
  readonly to: number;
  readonly header: Buffer;
  readonly data: Buffer;
  readonly commits: (readonly [number, number])[];
  readonly previousEpochFrames: number | undefined;
}

/** What the main thread needs after each request: where reading stopped, and for status/lag. */
export interface ShipperState {
  readonly end: WalEnd;
  readonly pendingBytes: number;
  /** Time of the oldest commit read but not at the destination (lag), if any. */
  readonly oldest: number | undefined;
  readonly walBytes: number;
  /** The WAL restarted under us (or commits of an earlier epoch were never copied): a new generation is needed. */
  readonly lost: boolean;
}

export class WalShipper {
  readonly dest: Destination;
  #follower: WalFollower;
  #generation = '';
  /** The last frame copied out of the WAL, per epoch of the current generation. */
  #copied = { epoch: 0, frame: 0 };
  /** Frames copied out of the WAL, not yet at the destination, oldest first. */
  #pending: Pending[] = [];
  #pendingBytes = 0;

  constructor(dest: Destination, dbFile: string) {
    this.dest = dest;
    this.#follower = new WalFollower(dbFile);
    this.#follower.scan();
  }

  /** Starts generation `id`: its snapshot replays the current epoch from frame 1, so ship it from there. */
  newGeneration(id: string, marks?: WalMarks): void {
    const f = this.#follower;
    if (marks) f.noteMarks(marks);
    this.#generation = id;
    f.lost = false;
    const current = f.commits.filter((c) => c.epoch === f.epoch);
    f.commits.splice(0, f.commits.length, ...current);
    const pos = f.position();
    // An emptied WAL: the next epoch starts the generation; else the current one from frame 1.
    this.#copied = pos.epoch > f.epoch ? { epoch: f.epoch, frame: f.frames } : { epoch: f.epoch, frame: 0 };
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  state(): ShipperState {
    const f = this.#follower;
    const oldest = this.#pending.find((p) => p.commits.length > 0)?.commits[0]?.[1] ?? f.commits[0]?.t ?? f.oldestUnscanned;
    // `end` vouches only for frames copied out of the WAL (a checkpoint may remove them); 0 otherwise.
    const copiedAll = this.#copied.epoch === f.epoch && this.#copied.frame === f.frames && !this.#isLost();
    return { end: copiedAll ? f.end : { ...f.end, end: 0 }, pendingBytes: this.#pendingBytes, oldest, walBytes: f.walBytes(), lost: this.#isLost() };
  }

  #isLost(): boolean {
    const f = this.#follower;
    return f.lost || f.commits.some((c) => c.epoch < f.epoch);
  }

  /** Reads new frames and copies them into memory (nothing uploaded): before a checkpoint. */
  copy(marks: WalMarks, at = Date.now()): ShipperState {
    this.#follower.noteMarks(marks);
    this.#follower.scan(at);
    if (!this.#isLost()) this.#copyScanned(false);
    return this.state();
  }

  /** The frames the main thread copied right before its checkpoint: read, and copied at once (the next read may be a new epoch). */
  appendTail(tail: Buffer, marks: WalMarks, frames: number): void {
    try {
      this.#follower.appendTail(tail, marks);
      // Short of what the checkpoint moved: frames another process committed were written over
      // before they could be read (wal-guard.ts); the backup needs a new generation.
      if (this.#follower.frames < frames) this.#follower.lost = true;
      this.#copyScanned(true);
    } catch (err) {
      // The WAL is emptied by now: whatever was not copied is gone; a new generation must begin.
      this.#follower.lost = true;
      throw err;
    }
  }

  /** Where a snapshot taken now starts (WalFollower.position). */
  position(marks: WalMarks): WalPosition {
    this.#follower.noteMarks(marks);
    return this.#follower.position();
  }

  /** Reads and ships everything committed; a lost WAL is reported instead (the main thread starts a new generation). */
  async ship(marks: WalMarks, at: number): Promise<ShipperState> {
    this.#follower.noteMarks(marks);
    this.#follower.scan(at);
    if (this.#isLost()) return this.state();
    this.#copyScanned(false);
    while (this.#pending.length > 0) {
      const p = this.#pending[0]!;
      const object = keys.segment(this.#generation, p.epoch, p.from, p.to);
      const manifest: SegmentManifest = {
        kind: 'segment',
        generation: this.#generation,
        epoch: p.epoch,
        from: p.from,
        to: p.to,
        header: p.header.toString('base64'),
        ...(p.previousEpochFrames !== undefined ? { previousEpochFrames: p.previousEpochFrames } : {}),
        bytes: p.data.length,
        sha256: sha256(p.data),
        object,
        commits: p.commits,
      };
      await this.dest.put(object, p.data);
      await this.dest.put(object.replace(/\.wal$/, '.json'), sealManifest(manifest));
      this.#pending.shift();
      this.#pendingBytes -= p.data.length;
    }
    // Every frame read is at the destination: the follower may read into the same memory again.
    this.#follower.recycle();
    return this.state();
  }

  /**
   * Moves frames read but not yet copied into memory: once copied, a checkpoint may remove them
   * from the WAL, so under a steady write load the WAL still gets checkpointed (Litestream keeps a
   * "shadow WAL" on disk for the same reason). A destination that keeps failing: past
   * MAX_PENDING_BYTES we stop copying (`force`: the checkpoint's tail, bounded, is always taken)
   * and the frames wait in the WAL, which the main thread then does not checkpoint.
   */
  #copyScanned(force: boolean): void {
    const f = this.#follower;
    if (!force && this.#pendingBytes > MAX_PENDING_BYTES) return;
    if (f.epoch === 0) return;
    const from = this.#copied.epoch === f.epoch ? this.#copied.frame + 1 : 1;
    const to = f.frames;
    if (to < from) return;
    const data = f.readFrames(from, to);
    f.release(to);
    const commits = f.commits.filter((c) => c.epoch === f.epoch && c.frame >= from && c.frame <= to).map((c) => [c.frame, c.t] as const);
    const previousEpochFrames = from === 1 ? (this.#copied.epoch === f.epoch - 1 ? this.#copied.frame : 0) : undefined;
    this.#pending.push({ epoch: f.epoch, from, to, header: f.headerBytes!, data, commits, previousEpochFrames });
    this.#pendingBytes += data.length;
    this.#copied = { epoch: f.epoch, frame: to };
    const keep = f.commits.filter((c) => c.epoch > f.epoch || (c.epoch === f.epoch && c.frame > to));
    f.commits.splice(0, f.commits.length, ...keep);
  }

  close(): void {
    this.#follower.close();
  }
}
