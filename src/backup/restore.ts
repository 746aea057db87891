/**
 * Restore (docs/reference/backups.md, runbook there): builds the data folder for time T in a
 * temporary sibling folder (snapshot, then WAL epochs replayed by SQLite itself, then photos),
 * checks every object against its manifest on the way and the database's integrity at the end,
 * and only then moves it into place. On any failure the target is left absent or empty.
 */
import { createWriteStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { applyWal, finishDatabase, integrityCheck, photoIds } from '../storage/sqlite/wal-restore.js';
import { readCatalog, type Catalog } from './catalog.js';
import type { Destination } from './destination.js';
import { BackupDamaged, hashingTap, keys, sha256, snapshotFormat, type SnapshotManifest } from './layout.js';
import { formatWindow, planRestore, type RestorePlan } from './plan.js';
import { restorePhotos } from './photos.js';

/** T outside what the destination holds: the one-line message gives the window. */
export class OutsideWindow extends Error {
  constructor(t: number, c: Catalog) {
    super(`${new Date(t).toISOString()} is outside the backup: ${formatWindow(c)}`);
    this.name = 'OutsideWindow';
  }
}

/** `--at`: ISO-8601 or epoch milliseconds. */
export function parseAt(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(t)) throw new Error(`--at must be an ISO-8601 time or epoch milliseconds, not "${value}"`);
  return t;
}

/** Downloads a snapshot into `file`, checking its size and sha256. */
export async function fetchSnapshot(dest: Destination, s: SnapshotManifest, file: string): Promise<void> {
  const stream = await dest.getStream(s.object);
  if (!stream) throw new BackupDamaged(s.object, 'is missing');
  const t = hashingTap();
  await pipeline(stream, t.tap, createWriteStream(file));
  if (t.bytes() !== s.bytes) throw new BackupDamaged(s.object, `is truncated or changed (${t.bytes()} of ${s.bytes} bytes)`);
  if (t.sha256() !== s.sha256) throw new BackupDamaged(s.object, 'fails its checksum (changed)');
}

export interface RestoreResult {
  readonly plan: RestorePlan;
  /** Photo rows whose bytes the backup does not hold (uploaded within the last sync interval). */
  readonly missingPhotos: string[];
}

/** Every snapshot and segment object a catalog names, by generation: what tells one listing from another. */
function listing(c: Catalog): string {
  return c.generations.map((g) => [g.id, ...g.snapshots.map((s) => s.object), ...g.segments.map((s) => s.object)].join('\n')).join('\n\n');
}

/** `readCatalog`, read again once when a manifest it listed was gone by the time it was fetched. */
async function readListed(dest: Destination): Promise<Catalog> {
  try {
    return await readCatalog(dest);
  } catch (err) {
    if (!(err instanceof BackupDamaged && err.missing)) throw err;
    return readCatalog(dest);
  }
}

/**
 * Runs `use` on the destination's catalog. A compaction (compaction.ts, from retention) or a
 * retention may replace or remove objects between the listing and the fetches: it writes a merged
 * segment before it deletes the parts, so a restore that listed the parts finds one missing
 * (issue #21). So, once: when an object is missing, the catalog is read again, and if the new
 * listing differs and no longer names that object, `use` runs again on it (after `reset`). A
 * genuinely missing object is named by both listings, and the damage is reported as before;
 * a changed or truncated object is never retried (nothing rewrites an object in place).
 */
export async function withCatalog<R>(dest: Destination, use: (c: Catalog) => Promise<R>, reset?: () => Promise<void>): Promise<R> {
  const first = await readListed(dest);
  try {
    return await use(first);
  } catch (err) {
    if (!(err instanceof BackupDamaged && err.missing)) throw err;
    const again = await readListed(dest).catch(() => undefined);
    if (!again || listing(again) === listing(first) || listing(again).split('\n').includes(err.key)) throw err;
    await reset?.();
    return use(again);
  }
}

/** Restores the SQLite data folder for time `at` (default: the latest) into `dir`, which must not exist. */
export function restoreSqliteInto(dest: Destination, dir: string, at?: number): Promise<RestoreResult> {
  // A second try starts again from an empty folder.
  return withCatalog(
    dest,
    (catalog) => restoreFrom(dest, catalog, dir, at),
    () => rm(dir, { recursive: true, force: true }),
  );
}

async function restoreFrom(dest: Destination, catalog: Catalog, dir: string, at: number | undefined): Promise<RestoreResult> {
  const t = at ?? catalog.latest;
  if (t === null || t === undefined || catalog.earliest === null || t < catalog.earliest || t > catalog.latest!) throw new OutsideWindow(t ?? Date.now(), catalog);
  const plan = planRestore(catalog, t);
  if (!plan) throw new OutsideWindow(t, catalog);
  if (snapshotFormat(plan.snapshot.database) !== 'file') throw new Error('this backup holds a PostgreSQL database: restore it with --database <url of an empty database>');
  await mkdir(dir, { recursive: true });
  const dbFile = join(dir, 'db.sqlite');
  await fetchSnapshot(dest, plan.snapshot, dbFile);
  for (const e of plan.epochs) {
    const parts: Buffer[] = [];
    for (const seg of e.segments) {
      const data = await dest.get(seg.object);
      if (!data) throw new BackupDamaged(seg.object, 'is missing');
      if (data.length !== seg.bytes) throw new BackupDamaged(seg.object, `is truncated or changed (${data.length} of ${seg.bytes} bytes)`);
      if (sha256(data) !== seg.sha256) throw new BackupDamaged(seg.object, 'fails its checksum (changed)');
      parts.push(data);
    }
    const all = Buffer.concat(parts);
    const frameSize = all.length / (e.segments.at(-1)!.to - e.segments[0]!.from + 1);
    applyWal(dbFile, e.header, all.subarray(0, e.through * frameSize));
  }
  finishDatabase(dbFile);
  const integrity = integrityCheck(dbFile);
  if (integrity !== 'ok') throw new BackupDamaged(plan.snapshot.object, `restores to a database that fails integrity_check: ${integrity.slice(0, 200)}`);
  const missingPhotos = await restorePhotos(dest, catalog.photoLogs, plan.stateAt, photoIds(dbFile), join(dir, 'photos'));
  return { plan, missingPhotos };
}

/** True when `dir` does not exist or is an empty folder. */
export function isEmptyTarget(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/** Builds in a sibling temp folder, then renames into `target` (absent or empty; `force` clears it first). */
export async function restoreToFolder(dest: Destination, target: string, at: number | undefined, force: boolean): Promise<RestoreResult> {
  const abs = resolve(target);
  const temp = join(dirname(abs), `.${basename(abs)}.restoring-${randomBytes(4).toString('hex')}`);
  try {
    const result = await restoreSqliteInto(dest, temp, at);
    if (existsSync(abs)) {
      if (force) await rm(abs, { recursive: true, force: true });
      else await rmdir(abs); // empty (checked by the caller): make way for the rename
    }
    await rename(temp, abs);
    return result;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/** Checks every object the catalog names (snapshots, segments, photos) against its size and sha256: `backup verify`. */
export async function checkEveryObject(dest: Destination, catalog: Catalog): Promise<number> {
  const work = await mkdtemp(join(tmpdir(), 'tablebase-check-'));
  let n = 0;
  try {
    for (const g of catalog.generations) {
      for (const s of g.snapshots) {
        await fetchSnapshot(dest, s, join(work, 'snapshot'));
        n++;
      }
      for (const seg of g.segments) {
        const data = await dest.get(seg.object);
        if (!data) throw new BackupDamaged(seg.object, 'is missing');
        if (data.length !== seg.bytes || sha256(data) !== seg.sha256) throw new BackupDamaged(seg.object, 'fails its checksum (changed or truncated)');
        n++;
      }
    }
    const photos = new Map<string, number>();
    for (const log of catalog.photoLogs) for (const e of log.events) if (!('deleted' in e)) photos.set(e.sha256, e.bytes);
    for (const [hash, bytes] of photos) {
      const key = keys.photo(hash);
      const data = await dest.get(key);
      if (!data) throw new BackupDamaged(key, 'is missing');
      if (data.length !== bytes || sha256(data) !== hash) throw new BackupDamaged(key, 'fails its checksum (changed or truncated)');
      n++;
    }
    return n;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
