/**
 * Continuous backup of a serving SQLite deployment (docs/reference/backups.md): every commit's WAL
 * frames are captured and shipped every `syncIntervalMs` as a segment with each commit's time;
 * photos are shipped by content; snapshots run on the `snapshotEvery` schedule and on demand,
 * streaming the database file while writes go on. A failing destination never fails a request:
 * the tick retries with backoff (at most 10 s) and counts failures for /dashboard/metrics and /health.
 *
 * Threads: reading, checking, hashing and uploading the WAL run on a worker thread (WalShipper,
 * wal-thread.ts), so they do not cost the event loop that serves requests and runs the writer;
 * so does a snapshot's upload, beside the shipping (snapshotNow).
 * This thread keeps what must be here: a mark per commit (one read of the WAL index, WalGuard.noteCommit, handed
 * over in batches), the read transaction that holds back checkpoints, and our checkpoint, which
 * must fall between two writes of this process (wal-guard.ts says why it loses no frame). Every
 * exchange with the worker but a snapshot's upload goes through one queue (#exclusive), so the
 * worker never reads the WAL between the state a checkpoint relies on and the tail it is handed.
 */
import { Cron } from 'croner';
import type { Logger } from '../core/logger.js';
import type { BlobStore } from '../photos/blob-store.js';
import type { SqliteDriver } from '../storage/sqlite/driver.js';
import { WalGuard } from '../storage/sqlite/wal-guard.js';
import { readCatalog, snapshotList } from './catalog.js';
import type { Destination } from './destination.js';
import { FORMAT, FORMAT_KEY, keys, newBackupId, sealManifest } from './layout.js';
import { PhotoShipper, photosAt } from './photos.js';
import { prune } from './retention.js';
import { infoOf, type SnapshotInfo } from './snapshot.js';
import { MAX_PENDING_BYTES, type ShipperState } from './wal-shipper.js';
import { WalWorker } from './wal-worker.js';
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';

/** Bytes of WAL after which we checkpoint (what SQLite's own automatic checkpoint would allow, 1000 pages). */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;
/**
 * Our checkpoints let the writer reuse the WAL in place (wal-guard.ts); past this size it is cut
 * back when it starts over, so a burst does not keep its disk space. Above what a second of steady
 * writes leaves between two checkpoints here (~15 MB at 17,000 creates/s), so it is rarely cut.
 */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;
/**
 * Backfill passes on the worker thread before our checkpoint (#backfill): another while the
 * writes that came during one left more than RESTART_COPY_BYTES to copy, which the checkpoint
 * would copy and sync on the event loop.
 */
const BACKFILL_PASSES = 3;
const RESTART_COPY_BYTES = 256 * 1024;
const MAX_BACKOFF_MS = 10_000;
const PRUNE_EVERY_MS = 3_600_000;

export class ContinuousBackup {
  readonly dest: Destination;
  #driver: SqliteDriver;
  #photoStore: BlobStore;
  #settings: BackupSettings;
  #log: Logger;
  #guard!: WalGuard;
  #worker!: WalWorker;
  /** The worker's state after its last answer (lag, whether a checkpoint may run). */
  #state: ShipperState | undefined;
  /** Time of the oldest mark handed to the worker and not yet reflected in #state. */
  #inFlight: number | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #photos!: PhotoShipper;
  #generation = '';
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #snapshot: Promise<SnapshotInfo> | undefined;
  /**
   * Snapshots reading the database file now (no checkpoint of ours meanwhile). A count, not a flag:
   * a new generation (a lost WAL, a dead worker) starts its snapshot while the old one may still
   * read, and the first to end must not let a checkpoint under the other.
   */
  #copies = 0;
  /** The newest snapshot while it runs (the one later calls join); an older one may still run. */
  #snapshotRunning: Promise<SnapshotInfo> | undefined;
  #stopped = false;
  #lastSyncAt: number | null = null;
  #failures = 0;
  #consecutive = 0;
  #nextSnapshot: number | null = null;
  #lastPrune = 0;

  constructor(o: { dest: Destination; driver: SqliteDriver; photoStore: BlobStore; settings: BackupSettings; log: Logger }) {
    this.dest = o.dest;
    this.#driver = o.driver;
    this.#photoStore = o.photoStore;
    this.#settings = o.settings;
    this.#log = o.log;
  }

  /**
   * Starts following the WAL at once; resolves once the worker thread runs (so the first snapshot,
   * which then runs in the background with the first sync, is taken at start as before).
   */
  async start(): Promise<void> {
    this.#driver.setAutoCheckpoint(0);
    this.#driver.setWalSizeLimit(WAL_SIZE_LIMIT);
    this.#guard = new WalGuard(this.#driver.file);
    this.#worker = new WalWorker(this.#driver.file, this.#settings.to);
    this.#driver.onCommitted(() => {
      try {
        this.#guard.noteCommit();
      } catch (err) {
        this.#log.warn({ err }, 'backup: reading the WAL failed');
      }
    });
    const started = this.#newGeneration();
    this.#nextSnapshot = nextRun(this.#settings.snapshotEvery);
    this.#schedule(0);
    await started;
  }

  /** Runs `fn` alone with the worker: no other request goes out until it is done. */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Marks noted since the last request, for the next one (remembering the oldest for the lag). */
  #marks(): { sizes: Float64Array; times: Float64Array } {
    const m = this.#guard.takeMarks();
    if (m.times.length > 0) this.#inFlight ??= m.times[0];
    return m;
  }
  #answered(s: ShipperState): ShipperState {
    this.#state = s;
    this.#inFlight = undefined;
    return s;
  }

  /** A new generation (at start, after a lost WAL, after the worker died), and its first snapshot. */
  #newGeneration(): Promise<void> {
    this.#generation = newBackupId();
    const gen = this.#generation;
    if (this.#worker.dead) this.#worker = new WalWorker(this.#driver.file, this.#settings.to);
    // Queued: the worker starts it before anything asked later (the snapshot's position).
    const started = this.#exclusive(() => this.#worker.request('generation', { gen, marks: this.#marks() })).catch((err: unknown) => {
      this.#log.warn({ err: scrub(err) }, 'backup: the worker thread did not start; retrying on the next tick');
    });
    // Its own snapshot, not a join of one the old generation may still run.
    this.#snapshot = this.#snapshotRunning = undefined;
    void this.snapshotNow().catch((err) => this.#log.warn({ err: scrub(err) }, 'backup: first snapshot failed; retrying on the next tick'));
    return started;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#tick().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#consecutive ? Math.min(MAX_BACKOFF_MS, this.#settings.syncIntervalMs * 2 ** this.#consecutive) : this.#settings.syncIntervalMs);
      });
    }, ms);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    const at = Date.now();
    try {
      if (this.#worker.dead) {
        this.#log.warn({ err: scrub(this.#worker.dead) }, 'backup: the worker thread stopped; starting it again with a new generation');
        void this.#newGeneration();
      }
      await this.#ensurePhotos();
      await this.#shipWal(at);
      await this.#photos.sync(at);
      if (!this.#snapshot) await this.snapshotNow();
      await this.dest.put(keys.synced(this.#generation), sealManifest({ kind: 'synced', generation: this.#generation, at }));
      this.#lastSyncAt = at;
      this.#consecutive = 0;
      if ((this.#state?.walBytes ?? 0) > CHECKPOINT_BYTES) await this.#checkpoint();
      if (this.#nextSnapshot !== null && Date.now() >= this.#nextSnapshot) {
        this.#nextSnapshot = nextRun(this.#settings.snapshotEvery);
        void this.snapshotNow().catch((err) => this.#log.warn({ err: scrub(err) }, 'backup: scheduled snapshot failed'));
      }
      if (Date.now() - this.#lastPrune > PRUNE_EVERY_MS) {
        this.#lastPrune = Date.now();
        await prune(this.dest, this.#settings.retainDays, this.#generation);
      }
    } catch (err) {
      this.#failures++;
      this.#consecutive++;
      this.#log.warn({ err: scrub(err), consecutive: this.#consecutive }, 'backup: sync failed; retrying');
    }
  }

  #photosReady: Promise<void> | undefined;
  #ensurePhotos(): Promise<void> {
    this.#photosReady ??= this.#openPhotos().catch((err: unknown) => {
      this.#photosReady = undefined;
      throw err;
    });
    return this.#photosReady;
  }

  async #openPhotos(): Promise<void> {
    const existing = await this.dest.get(FORMAT_KEY);
    if (!existing) await this.dest.put(FORMAT_KEY, Buffer.from(JSON.stringify(FORMAT)));
    const catalog = await readCatalog(this.dest);
    this.#photos = new PhotoShipper(this.dest, this.#photoStore, photosAt(catalog.photoLogs, Infinity));
  }

  /** The worker reads and ships every committed frame; a WAL restarted under us starts a new generation first. */
  async #shipWal(at: number): Promise<void> {
    let s = await this.#exclusive(async () => this.#answered(await this.#worker.request('ship', { marks: this.#marks(), at })));
    if (s.lost) {
      // Unshipped commits of an earlier epoch: the WAL restarted under us (another process's checkpoint).
      this.#log.warn('backup: the WAL restarted before every frame was copied; starting a new generation');
      void this.#newGeneration();
      s = await this.#exclusive(async () => this.#answered(await this.#worker.request('ship', { marks: this.#marks(), at })));
      if (s.lost) throw new Error('the WAL restarted again while a new generation began');
    }
  }

  /**
   * Checkpoints when every committed frame is copied (by the worker, or the tail here) and the
   * copy in memory is bounded. The worker copies, then backfills; then, in the same queue slot and in one
   * synchronous step, WalGuard.checkpoint checks the WAL against where the worker stopped,
   * checkpoints, and the tail goes to the worker before any other request (wal-guard.ts).
   */
  #checkpoint(): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#copies > 0 || this.#worker.dead) return;
      const s = this.#answered(await this.#worker.request('copy', { marks: this.#marks(), at: Date.now() }));
      if (this.#copies > 0 || s.lost || s.pendingBytes > MAX_PENDING_BYTES) return;
      // After the copy, so that what the RESTART still copies and syncs on this thread is only
      // what was written since the last pass; the writes during the passes go with the tail.
      await this.#backfill();
      if (this.#copies > 0) return;
      const r = this.#guard.checkpoint(s.end);
      if (!r) return;
      const tail = new Uint8Array(r.tail.buffer, r.tail.byteOffset, r.tail.byteLength);
      if (r.marks.times.length > 0) this.#inFlight ??= r.marks.times[0];
      await this.#worker.request('tail', { tail, marks: r.marks, frames: r.frames }, [r.marks.sizes.buffer as ArrayBuffer, r.marks.times.buffer as ArrayBuffer]);
    });
  }

  /**
   * The bulk of a checkpoint off the event loop (wal-backfill.ts): the guard's read moves to the
   * WAL's end and the worker copies every frame through it into the database file, again while
   * the writes meanwhile left much to copy; the checkpoint then copies only the rest. Runs in the
   * checkpoint's queue slot (no other backfill, no snapshot's `position` in between) and never
   * while a snapshot reads the file: the guard's read stays at or below the snapshot's position.
   * A failure here is not the destination's: logged, and the checkpoint copies everything itself.
   */
  async #backfill(): Promise<void> {
    try {
      for (let pass = 0; pass < BACKFILL_PASSES && this.#copies === 0; pass++) {
        this.#guard.advance();
        const b = await this.#worker.request('backfill', {});
        if (b.remainingBytes <= RESTART_COPY_BYTES) return;
      }
    } catch (err) {
      this.#log.warn({ err: scrub(err) }, 'backup: backfill on the worker thread failed; the checkpoint copies the WAL itself');
    }
  }

  /** A snapshot now; a call while one runs joins it. */
  snapshotNow(): Promise<SnapshotInfo> {
    if (this.#snapshotRunning) return this.#snapshotRunning;
    const run = (async () => {
      let reading = false;
      try {
        await this.#ensurePhotos();
        // Checkpoint first (best effort): the snapshot then holds the data itself, and a restore
        // from it replays little WAL.
        await this.#checkpoint().catch(() => undefined);
        this.#copies++;
        reading = true;
        const generation = this.#generation;
        // No checkpoint of ours runs while the file is read (#copies), and our read transaction
        // holds back everyone else's past `position`: replaying from it repairs any page a
        // checkpoint did write meanwhile.
        const position = await this.#exclusive(() => this.#worker.request('position', { marks: this.#marks() }));
        // Every frame through `position` reaches the destination before the snapshot's manifest
        // does: a restore from this snapshot replays them, and a crash between the manifest and
        // the next sync left the newest snapshot unrestorable ("… is missing (WAL frames 1..2 of
        // epoch 14)", bench/backup.ts's SIGKILLed servers, about one run in six).
        await this.#exclusive(async () => this.#answered(await this.#worker.request('ship', { marks: this.#marks(), at: Date.now() })));
        // The upload (read, sha256, write; manifest last) runs on the worker thread, beside its
        // syncs rather than queued with them (#exclusive): sent only now, after both answers above.
        const m = await this.#worker.request('snapshot', { generation, takenAtMs: Date.now(), position });
        return infoOf(m);
      } finally {
        if (reading) this.#copies--;
      }
    })();
    this.#snapshot = run;
    this.#snapshotRunning = run;
    const ended = () => {
      if (this.#snapshotRunning === run) this.#snapshotRunning = undefined;
    };
    run.then(ended, () => {
      ended();
      if (this.#snapshot === run) this.#snapshot = undefined;
    });
    return run;
  }

  async snapshots(): Promise<{ earliest: number | null; latest: number | null; snapshots: SnapshotInfo[] }> {
    const c = await readCatalog(this.dest, { segments: false });
    return { earliest: c.earliest, latest: c.latest, snapshots: snapshotList(c) };
  }

  status(): BackupStatus {
    const times = [this.#state?.oldest, this.#inFlight, this.#guard?.oldestMark].filter((t): t is number => t !== undefined);
    const oldest = times.length > 0 ? Math.min(...times) : undefined;
    return {
      destination: this.dest.display,
      lastSyncAt: this.#lastSyncAt === null ? null : new Date(this.#lastSyncAt).toISOString(),
      lagMs: oldest !== undefined ? Math.max(0, Date.now() - oldest) : 0,
      failures: this.#failures,
      failing: this.#consecutive >= 3,
    };
  }

  /** Ships what is left (best effort), then lets the writer checkpoint by itself again. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
    await this.#snapshot?.catch(() => undefined);
    await this.#tick();
    this.#driver.onCommitted(undefined);
    await this.#exclusive(() => this.#worker.request('close', {})).catch(() => undefined);
    await this.#worker.terminate();
    this.#guard.close();
    this.#driver.setAutoCheckpoint(1000);
    this.#driver.setWalSizeLimit(-1);
  }
}

function nextRun(expr: string): number | null {
  const next = new Cron(expr, { paused: true }).nextRun();
  return next ? next.getTime() : null;
}

/** An error as it may be logged: a message only (an SDK error may echo a signed URL). */
function scrub(err: unknown): { message: string } {
  return { message: err instanceof Error ? err.message.replace(/[?&](X-Amz-[^=&]+|Signature|AWSAccessKeyId)=[^&\s]*/g, '') : String(err) };
}
