/**
 * Continuous backup of a serving SQLite deployment (docs/reference/backups.md): every commit's WAL
 * frames are captured as it commits (SqliteDriver.onCommitted → WalFollower.scan) and shipped every
 * `syncIntervalMs` as a segment with each commit's time; photos are shipped by content; snapshots
 * run on the `snapshotEvery` schedule and on demand, streaming the database file while writes go
 * on. A failing destination never fails a request: the tick retries with backoff (at most 10 s)
 * and counts failures for /dashboard/metrics and /health.
 */
import { Cron } from 'croner';
import type { Logger } from '../core/logger.js';
import type { BlobStore } from '../photos/blob-store.js';
import type { SqliteDriver } from '../storage/sqlite/driver.js';
import { WalFollower } from '../storage/sqlite/wal.js';
import { readCatalog, snapshotList } from './catalog.js';
import type { Destination } from './destination.js';
import { FORMAT, FORMAT_KEY, keys, newBackupId, sealManifest, sha256, type SegmentManifest } from './layout.js';
import { PhotoShipper, photosAt } from './photos.js';
import { prune } from './retention.js';
import { infoOf, uploadSnapshot, type SnapshotInfo } from './snapshot.js';
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';

/** Bytes of WAL after which we checkpoint (what SQLite's own automatic checkpoint would allow, 1000 pages). */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;
const MAX_BACKOFF_MS = 10_000;
const PRUNE_EVERY_MS = 3_600_000;
/** Copied frames held in memory before we stop checkpointing (the WAL then keeps them). */
const MAX_PENDING_BYTES = 256 * 1024 * 1024;

interface Pending {
  readonly epoch: number;
  readonly from: number;
  readonly to: number;
  readonly header: Buffer;
  readonly data: Buffer;
  readonly commits: (readonly [number, number])[];
  readonly previousEpochFrames: number | undefined;
}

export class ContinuousBackup {
  readonly dest: Destination;
  #driver: SqliteDriver;
  #photoStore: BlobStore;
  #settings: BackupSettings;
  #log: Logger;
  #follower!: WalFollower;
  #photos!: PhotoShipper;
  #generation = '';
  /** The last frame the destination holds, per epoch of the current generation. */
  #copied = { epoch: 0, frame: 0 };
  /** Frames copied out of the WAL, not yet at the destination, oldest first. */
  #pending: Pending[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #snapshot: Promise<SnapshotInfo> | undefined;
  #copying = false;
  #snapshotRunning = false;
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

  /** Starts following the WAL at once; the first snapshot and sync run in the background. */
  start(): void {
    this.#driver.setAutoCheckpoint(0);
    this.#follower = new WalFollower(this.#driver.file);
    this.#follower.scan();
    this.#driver.onCommitted(() => {
      try {
        this.#follower.noteCommit();
      } catch (err) {
        this.#log.warn({ err }, 'backup: reading the WAL failed');
      }
    });
    this.#newGeneration();
    this.#nextSnapshot = nextRun(this.#settings.snapshotEvery);
    this.#schedule(0);
  }

  #newGeneration(): void {
    this.#generation = newBackupId();
    this.#follower.lost = false;
    const current = this.#follower.commits.filter((c) => c.epoch === this.#follower.epoch);
    this.#follower.commits.splice(0, this.#follower.commits.length, ...current);
    // The new generation's snapshot replays the current epoch from frame 1: ship it from there.
    const f = this.#follower;
    const pos = f.position();
    // An emptied WAL: the next epoch starts the generation; else the current one from frame 1.
    this.#copied = pos.epoch > f.epoch ? { epoch: f.epoch, frame: f.frames } : { epoch: f.epoch, frame: 0 };
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#snapshot = undefined;
    void this.snapshotNow().catch((err) => this.#log.warn({ err: scrub(err) }, 'backup: first snapshot failed; retrying on the next tick'));
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
      await this.#ensurePhotos();
      this.#follower.scan(at);
      // Unshipped commits of an earlier epoch: the WAL restarted under us (another process's checkpoint).
      if (this.#follower.lost || this.#follower.commits.some((c) => c.epoch < this.#follower.epoch)) {
        this.#log.warn('backup: the WAL restarted before every frame was copied; starting a new generation');
        this.#newGeneration();
      }
      await this.#shipWal();
      await this.#photos.sync(at);
      if (!this.#snapshot) await this.snapshotNow();
      await this.dest.put(keys.synced(this.#generation), sealManifest({ kind: 'synced', generation: this.#generation, at }));
      this.#lastSyncAt = at;
      this.#consecutive = 0;
      if (this.#follower.walBytes() > CHECKPOINT_BYTES) this.#checkpoint();
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

  #shipping: Promise<void> = Promise.resolve();
  /** Ships copied frames; calls queue behind each other (the tick and a snapshot may both ask). */
  #shipWal(): Promise<void> {
    const run = this.#shipping.then(() => this.#shipWalNow());
    this.#shipping = run.catch(() => undefined);
    return run;
  }

  /**
   * Copies newly committed frames out of the WAL into memory (synchronous): once copied, a
   * checkpoint may remove them from the WAL, so under a steady write load the WAL still gets
   * checkpointed (Litestream keeps a "shadow WAL" on disk for the same reason).
   */
  #copy(): void {
    const f = this.#follower;
    f.scan();
    // A destination that keeps failing: stop copying into memory; the frames wait in the WAL,
    // which is not checkpointed until they are copied.
    if (this.#pendingBytes > MAX_PENDING_BYTES) return;
    if (f.epoch === 0) return;
    const from = this.#copied.epoch === f.epoch ? this.#copied.frame + 1 : 1;
    const to = f.frames;
    if (to < from) return;
    const data = f.readFrames(from, to);
    const commits = f.commits.filter((c) => c.epoch === f.epoch && c.frame >= from && c.frame <= to).map((c) => [c.frame, c.t] as const);
    const previousEpochFrames = from === 1 ? (this.#copied.epoch === f.epoch - 1 ? this.#copied.frame : 0) : undefined;
    this.#pending.push({ epoch: f.epoch, from, to, header: f.headerBytes!, data, commits, previousEpochFrames });
    this.#pendingBytes += data.length;
    this.#copied = { epoch: f.epoch, frame: to };
    const keep = f.commits.filter((c) => c.epoch > f.epoch || (c.epoch === f.epoch && c.frame > to));
    f.commits.splice(0, f.commits.length, ...keep);
  }

  /** Checkpoints when nothing captured is left uncopied (and the copy in memory is bounded). */
  #checkpoint(): void {
    if (this.#copying || this.#pendingBytes > MAX_PENDING_BYTES) return;
    this.#copy();
    this.#follower.checkpoint(this.#copied);
  }

  async #shipWalNow(): Promise<void> {
    this.#copy();
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
  }

  /** A snapshot now; a call while one runs joins it. */
  snapshotNow(): Promise<SnapshotInfo> {
    if (this.#snapshot && this.#snapshotRunning) return this.#snapshot;
    this.#snapshotRunning = true;
    const run = (async () => {
      try {
        await this.#ensurePhotos();
        // Checkpoint first (best effort): the snapshot then holds the data itself, and a restore
        // from it replays little WAL.
        this.#checkpoint();
        this.#copying = true;
        const generation = this.#generation;
        // No checkpoint of ours runs while the file is read (#copying), and our read transaction
        // holds back everyone else's past `position`: replaying from it repairs any page a
        // checkpoint did write meanwhile.
        const position = this.#follower.position();
        const takenAtMs = Date.now();
        const m = await uploadSnapshot(this.dest, { generation, file: this.#driver.file, takenAtMs, database: 'sqlite', position });
        return infoOf(m);
      } finally {
        this.#copying = false;
        this.#snapshotRunning = false;
      }
    })();
    this.#snapshot = run;
    run.catch(() => {
      if (this.#snapshot === run) this.#snapshot = undefined;
    });
    return run;
  }

  async snapshots(): Promise<{ earliest: number | null; latest: number | null; snapshots: SnapshotInfo[] }> {
    const c = await readCatalog(this.dest, { segments: false });
    return { earliest: c.earliest, latest: c.latest, snapshots: snapshotList(c) };
  }

  status(): BackupStatus {
    const oldest = this.#pending.find((p) => p.commits.length > 0)?.commits[0]?.[1] ?? this.#follower?.commits[0]?.t ?? this.#follower?.oldestUnscanned;
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
    this.#follower.close();
    this.#driver.setAutoCheckpoint(1000);
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
