/**
 * PostgreSQL mode (docs/reference/backups.md): a snapshot is a consistent logical dump of every
 * table (src/storage/postgres/snapshot.ts) stored like a SQLite snapshot (object, then manifest);
 * restore picks the last snapshot at or before T and loads it into an empty database. Point in
 * time between snapshots is PostgreSQL's own WAL archiving (see the docs).
 *
 * Photos: without `--storage` their bytes are rows of `_blobs`, inside the dump. With a store
 * outside the database (a bucket) they are shipped like SQLite's (photos.ts: content-addressed
 * objects and the photo log), every `syncIntervalMs` and around each dump; a restore writes the
 * photos of the restored `_photos` rows that the dump does not hold into the restored database's
 * `_blobs`, its own default store.
 */
import { Cron } from 'croner';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BackupSettings, BackupStatus } from '../core/backup-settings.js';
import type { Logger } from '../core/logger.js';
import type { BlobStore } from '../photos/blob-store.js';
import { DbBlobStore, prepareBlobTable } from '../photos/db-blob-store.js';
import { openPostgres } from '../storage/postgres/driver.js';
import { dumpPostgres, photosInDump, restorePostgresDump, type DumpLine } from '../storage/postgres/snapshot.js';
import { readCatalog, snapshotList, type Catalog } from './catalog.js';
import type { Destination } from './destination.js';
import { FORMAT, FORMAT_KEY, newBackupId, snapshotFormat } from './layout.js';
import { PhotoShipper, photosAt, restorePhotos } from './photos.js';
import { prune } from './retention.js';
import { formatWindow, planRestore } from './plan.js';
import { checkEveryObject, fetchSnapshot, OutsideWindow } from './restore.js';
import { infoOf, uploadSnapshot, type SnapshotInfo } from './snapshot.js';

const PRUNE_EVERY_MS = 3_600_000;

/** Whether a store keeps photo bytes outside the database, so a dump alone would lose them. */
export function photosOutsideDatabase(store: BlobStore | undefined): store is BlobStore {
  return store !== undefined && !(store instanceof DbBlobStore);
}

/** A photo shipper for `store` that knows what the destination already holds. */
export async function openPhotoShipper(dest: Destination, store: BlobStore): Promise<PhotoShipper> {
  const catalog = await readCatalog(dest);
  return new PhotoShipper(dest, store, photosAt(catalog.photoLogs, Infinity));
}

/**
 * Takes a snapshot of the database at `url` now. `photos` (a store outside the database): synced
 * before the dump, so what the dump references is mostly shipped already, and after it, before
 * the manifest, so a row the dump holds has its bytes logged (photos.ts finds bytes logged just
 * after T) before the snapshot is ever offered.
 */
export async function postgresSnapshot(dest: Destination, url: string, photos?: { sync(at: number): Promise<number> }): Promise<SnapshotInfo> {
  if (!(await dest.get(FORMAT_KEY))) await dest.put(FORMAT_KEY, Buffer.from(JSON.stringify(FORMAT)));
  const work = mkdtempSync(join(tmpdir(), 'tablebase-pgdump-'));
  try {
    const file = join(work, 'dump.jsonl');
    const out = createWriteStream(file);
    await photos?.sync(Date.now());
    const takenAtMs = Date.now();
    await dumpPostgres(url, async (line) => {
      if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
    });
    out.end();
    await once(out, 'finish');
    await photos?.sync(Date.now());
    const m = await uploadSnapshot(dest, { generation: newBackupId(takenAtMs), file, takenAtMs, database: 'postgres', position: { epoch: 0, frame: 0 } });
    return infoOf(m);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function* readLines(file: string): AsyncGenerator<DumpLine> {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) if (line) yield JSON.parse(line) as DumpLine;
}

interface DumpAt {
  readonly file: string;
  readonly snapshot: SnapshotInfo;
  readonly catalog: Catalog;
  /** The time of the dump's state: photos are taken from the log as of then. */
  readonly stateAt: number;
  /** A scratch folder removed afterwards. */
  readonly work: string;
}

/** Downloads (and checks) the snapshot for T into a temp file, then hands it to `use`. */
async function withDump<R>(dest: Destination, at: number | undefined, use: (d: DumpAt) => Promise<R>): Promise<R> {
  const catalog = await readCatalog(dest);
  const t = at ?? catalog.latest;
  if (t === null || t === undefined || catalog.earliest === null || t < catalog.earliest || t > catalog.latest!) throw new OutsideWindow(t ?? Date.now(), catalog);
  const plan = planRestore(catalog, t);
  if (!plan) throw new Error(formatWindow(catalog));
  if (snapshotFormat(plan.snapshot.database) !== 'dump') throw new Error('this backup holds a SQLite database: restore it with --data <new folder>');
  const work = mkdtempSync(join(tmpdir(), 'tablebase-pgrestore-'));
  try {
    const file = join(work, 'dump.jsonl');
    await fetchSnapshot(dest, plan.snapshot, file);
    return await use({ file, snapshot: infoOf(plan.snapshot), catalog, stateAt: plan.snapshot.takenAtMs, work });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The photos of the dump's `_photos` rows that the dump does not hold in `_blobs`, written into
 * `dir` from the backup's photo objects (each checked against its size and sha256). Returns the
 * ids written and the ids the backup holds no bytes for.
 */
async function photosOfDump(dest: Destination, d: DumpAt, dir: string): Promise<{ written: string[]; missing: string[] }> {
  const { photos, held } = await photosInDump(readLines(d.file));
  const wanted = (photos ?? []).filter((id) => !held.has(id));
  const missing = await restorePhotos(dest, d.catalog.photoLogs, d.stateAt, wanted, dir);
  const gone = new Set(missing);
  return { written: wanted.filter((id) => !gone.has(id)), missing };
}

export interface PostgresRestore {
  readonly snapshot: SnapshotInfo;
  /** Photos written into the restored `_blobs` from the backup's photo objects. */
  readonly photos: number;
  /** Photo rows whose bytes the backup does not hold (uploaded within the last sync interval). */
  readonly missingPhotos: string[];
}

/**
 * `restore --database URL`: loads the snapshot for T into an empty database, then the photos its
 * rows reference into that database's `_blobs`. The photos are fetched and checked first, so a
 * damaged photo object fails the restore before the database is touched.
 */
export function restorePostgres(dest: Destination, url: string, at: number | undefined): Promise<PostgresRestore> {
  return withDump(dest, at, async (d) => {
    const dir = join(d.work, 'photos');
    const { written, missing } = await photosOfDump(dest, d, dir);
    await restorePostgresDump(url, readLines(d.file));
    if (written.length > 0) {
      const driver = await openPostgres(url);
      try {
        await prepareBlobTable(driver);
        // Through the store itself: the bytes go in as the server writes them (parts of 256 KiB).
        const store = new DbBlobStore(join(d.work, 'cache'), driver);
        for (const id of written) await store.commit(join(dir, id), id);
      } finally {
        await driver.close();
      }
    }
    return { snapshot: d.snapshot, photos: written.length, missingPhotos: missing };
  });
}

/**
 * `backup verify` of a PostgreSQL backup: the dump's checksum, then every line parsed; row counts
 * per table; every photo a `_photos` row needs from the photo objects, checked; then every other
 * object's size and sha256.
 */
export function verifyPostgres(dest: Destination, at: number | undefined): Promise<{ snapshot: SnapshotInfo; counts: Record<string, number>; photos: number; objects: number }> {
  return withDump(dest, at, async (d) => {
    const counts: Record<string, number> = {};
    for await (const line of readLines(d.file)) {
      if (line.kind === 'table') counts[line.name] = 0;
      if (line.kind === 'rows') counts[line.table] = (counts[line.table] ?? 0) + line.rows.length;
    }
    const { written, missing } = await photosOfDump(dest, d, join(d.work, 'photos'));
    if (missing.length) throw new Error(`photos without backed-up bytes: ${missing.join(', ')}`);
    const objects = await checkEveryObject(dest, d.catalog);
    return { snapshot: d.snapshot, counts, photos: written.length, objects };
  });
}

/**
 * The server's side in PostgreSQL mode: snapshots on the schedule and on demand (no continuous
 * shipping of the database); with a photo store outside the database, its photos every
 * `syncIntervalMs`, so a photo deleted between two snapshots is still restorable at the first;
 * retention (retention.ts) after a snapshot, at most hourly.
 */
export class PostgresBackup {
  readonly dest: Destination;
  #url: string;
  #log: Logger;
  #running: Promise<SnapshotInfo> | undefined;
  #last: number | null = null;
  #failures = 0;
  #consecutive = 0;
  #cron: Cron;
  #photoStore: BlobStore | undefined;
  #shipper: Promise<PhotoShipper> | undefined;
  /** Photo syncs run one at a time (the timer's and a snapshot's): two would log the same photo twice. */
  #photoQueue: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #syncIntervalMs: number;
  #retainDays: number;
  #lastPrune = 0;
  #stopped = false;

  constructor(dest: Destination, url: string, settings: BackupSettings, log: Logger, photoStore?: BlobStore) {
    this.dest = dest;
    this.#url = url;
    this.#log = log;
    this.#syncIntervalMs = settings.syncIntervalMs;
    this.#retainDays = settings.retainDays;
    this.#photoStore = photosOutsideDatabase(photoStore) ? photoStore : undefined;
    this.#cron = new Cron(settings.snapshotEvery, () => void this.snapshotNow().catch(() => undefined));
    if (this.#photoStore) this.#schedulePhotos(0);
  }

  #syncPhotos(at: number): Promise<number> {
    const store = this.#photoStore;
    if (!store) return Promise.resolve(0);
    const run = this.#photoQueue.then(async () => {
      this.#shipper ??= openPhotoShipper(this.dest, store).catch((err: unknown) => {
        this.#shipper = undefined;
        throw err;
      });
      return (await this.#shipper).sync(at);
    });
    this.#photoQueue = run.catch(() => undefined);
    return run;
  }

  #schedulePhotos(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.#syncPhotos(Date.now())
        .then(
          () => {
            if (!this.#running) this.#consecutive = 0;
          },
          (err: unknown) => {
            this.#failures++;
            this.#consecutive++;
            this.#log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'backup: shipping photos failed; retrying');
          },
        )
        .finally(() => this.#schedulePhotos(this.#consecutive ? Math.min(10_000, this.#syncIntervalMs * 2 ** this.#consecutive) : this.#syncIntervalMs));
    }, ms);
    this.#timer.unref();
  }

  /** Retention after a snapshot (at most hourly), queued with the photo syncs so this process's never overlap it. */
  #prune(): Promise<void> {
    const run = this.#photoQueue.then(() => prune(this.dest, this.#retainDays, '', Date.now(), { wait: true }));
    this.#photoQueue = run.catch(() => undefined);
    return run.then(
      () => undefined,
      (err: unknown) => this.#log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'backup: retention failed'),
    );
  }

  snapshotNow(): Promise<SnapshotInfo> {
    this.#running ??= postgresSnapshot(this.dest, this.#url, this.#photoStore ? { sync: (at) => this.#syncPhotos(at) } : undefined)
      .then(
        (info) => {
          this.#last = Date.now();
          this.#consecutive = 0;
          if (this.#last - this.#lastPrune > PRUNE_EVERY_MS) {
            this.#lastPrune = this.#last;
            void this.#prune();
          }
          return info;
        },
        (err: unknown) => {
          this.#failures++;
          this.#consecutive++;
          this.#log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'backup: PostgreSQL snapshot failed');
          throw err;
        },
      )
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  async snapshots(): Promise<{ earliest: number | null; latest: number | null; snapshots: SnapshotInfo[] }> {
    const c = await readCatalog(this.dest, { segments: false });
    return { earliest: c.earliest, latest: c.latest, snapshots: snapshotList(c) };
  }

  status(): BackupStatus {
    return { destination: this.dest.display, lastSyncAt: this.#last === null ? null : new Date(this.#last).toISOString(), lagMs: 0, failures: this.#failures, failing: this.#consecutive >= 3 };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cron.stop();
    clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
    await this.#photoQueue;
  }
}
