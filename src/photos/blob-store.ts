/**
 * Where photo bytes live (docs/reference/configuration.md: `<data>/photos/`). An interface so another backend (object
 * storage) can replace the filesystem later; `FsBlobStore` is the one we ship.
 *
 * Layout under the root:
 *   <id>                  the original bytes, named by the (validated) photo id
 *   tmp/                  uploads in progress; on the same filesystem so commit is one rename
 *   thumbs/<id>/<W>x<H>   cached thumbnails; one folder per photo so delete removes them at once
 */
import { createReadStream, mkdirSync, readdirSync, rmSync, statSync, type ReadStream } from 'node:fs';
import { open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ApiError } from '../core/errors.js';

/** Photo ids (docs/reference/columns.md, prefix `ph`). Checked before any path is built, so no traversal. */
export const PHOTO_ID = /^ph_[0-9a-z]{16,32}$/;

export interface ByteRange {
  /** Inclusive offsets, as in `Content-Range`. */
  start: number;
  end: number;
}

export interface BlobStat {
  size: number;
  mtimeMs: number;
}

/** An original opened for serving: its size now, and its bytes read by absolute range later. */
export interface OpenedBlob {
  size: number;
  /** Inclusive offsets within `size`. */
  read(start: number, end: number): Promise<Readable>;
  close(): Promise<void>;
}

/** One page of stored photo ids (originals or thumbnails), for the orphan sweep. */
export interface BlobScan {
  /** Photo id → age reference (the newest modification time seen for it), in ms. */
  ids: Map<string, number>;
  /** Where the next page starts; undefined when the listing is complete. */
  next: string | undefined;
}

export interface BlobStore {
  /** Folder for uploads in progress. */
  readonly tempDir: string;
  /** Moves a finished temp file into place under `id`, durably. */
  commit(tempPath: string, id: string): Promise<void>;
  path(id: string): string;
  open(id: string, range?: ByteRange): ReadStream;
  stat(id: string): Promise<BlobStat | null>;
  /** Removes the photo and every thumbnail of it; a missing photo is not an error. */
  delete(id: string): Promise<void>;
  /** Folder holding the thumbnails of `id`. */
  thumbDir(id: string): string;
  /**
   * Stores that keep bytes elsewhere (the database, later object storage) and use this node's
   * disk as a cache: bring the original onto disk before it is opened (false: no such bytes).
   */
  fetch?(id: string): Promise<boolean>;
  /** Bring a thumbnail another node made onto disk at `target` (false: none yet). */
  fetchThumb?(id: string, name: string, target: string): Promise<boolean>;
  /** Keep a thumbnail just rendered at `file` for the other nodes. */
  saveThumb?(id: string, name: string, file: string): Promise<void>;
  /**
   * Stores that serve originals straight from elsewhere (object storage): the original, or null
   * when it is missing. Without it, the original is read from `path(id)`.
   */
  openBlob?(id: string): Promise<OpenedBlob | null>;
  /** Such stores write a copy of the original to `target` for rendering (false: missing). */
  copyOriginal?(id: string, target: string): Promise<boolean>;
  /** Up to `limit` stored names after `cursor`, as photo ids, for the orphan sweep. */
  scan(cursor: string | undefined, limit: number): Promise<BlobScan>;
  /** 'down' while the store cannot be reached (docs/reference/object-storage.md). */
  health?(): Promise<'up' | 'down'>;
  /**
   * Every stored original's id (no thumbnails), for the continuous backup's photo shipping
   * (docs/reference/backups.md): cheaper than `scan` on a bucket, where thumbnails outnumber originals.
   */
  originals?(): Promise<string[]>;
}

/**
 * A temp file name in the store's `tmp/` that records which process made it, so a start can tell
 * the left-overs of a killed process (remove) from the files of a live one (keep).
 */
export function tempName(kind: string, suffix = '.part'): string {
  return `${kind}_${process.pid}_${randomBytes(12).toString('hex')}${suffix}`;
}

const TEMP_OWNER = /^[a-z]+_(\d+)_/;

/** True when `pid` names a running process (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When this process started: a file named by our pid but older was left by an earlier one (a container restarts as pid 1 every time). */
const STARTED_MS = Date.now() - process.uptime() * 1000;

/** Whether a file in `tmp/` was left by a process that no longer runs (or is older than an hour). */
export function leftOver(name: string, mtimeMs: number, now = Date.now()): boolean {
  const owner = TEMP_OWNER.exec(name);
  if (owner) {
    const pid = Number(owner[1]);
    if (pid === process.pid ? mtimeMs < STARTED_MS : !processAlive(pid)) return true;
  }
  return mtimeMs < now - STALE_TEMP_MS;
}

export function assertPhotoId(id: string): void {
  // An id that cannot exist is an unknown photo, not a server error.
  if (!PHOTO_ID.test(id)) throw new ApiError('NOT_FOUND', 'No such photo');
}

/** Temp files older than this at startup were left by a crash, whoever made them. */
const STALE_TEMP_MS = 60 * 60 * 1000;

export class FsBlobStore implements BlobStore {
  readonly root: string;
  readonly tempDir: string;
  readonly #thumbsRoot: string;

  constructor(rootDir: string) {
    this.root = rootDir;
    this.tempDir = join(rootDir, 'tmp');
    this.#thumbsRoot = join(rootDir, 'thumbs');
    mkdirSync(this.tempDir, { recursive: true, mode: 0o700 });
    mkdirSync(this.#thumbsRoot, { recursive: true, mode: 0o700 });
    this.#sweepTemp();
  }

  path(id: string): string {
    assertPhotoId(id);
    return join(this.root, id);
  }

  thumbDir(id: string): string {
    assertPhotoId(id);
    return join(this.#thumbsRoot, id);
  }

  async commit(tempPath: string, id: string): Promise<void> {
    const target = this.path(id);
    // fsync the bytes before the rename, and the folder after it: a photo answered 2xx must
    // survive a crash (docs/reference/rules-and-hooks.md durability, applied to the blob its row points at).
    const handle = await open(tempPath, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, target);
    await syncDir(this.root);
  }

  open(id: string, range?: ByteRange): ReadStream {
    return createReadStream(this.path(id), range ? { start: range.start, end: range.end } : {});
  }

  async stat(id: string): Promise<BlobStat | null> {
    try {
      const s = await stat(this.path(id));
      return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(id: string): Promise<void> {
    await rm(this.path(id), { force: true });
    await rm(this.thumbDir(id), { recursive: true, force: true });
  }

  /** The local disk is part of this process's own health, not the store's. */
  health(): Promise<'up' | 'down'> {
    return Promise.resolve('up');
  }

  async originals(): Promise<string[]> {
    return (await readdir(this.root)).filter((n) => PHOTO_ID.test(n));
  }

  async scan(cursor: string | undefined, limit: number): Promise<BlobScan> {
    const names = new Set<string>();
    for (const n of await readdir(this.root)) if (PHOTO_ID.test(n)) names.add(n);
    for (const n of await readdir(this.#thumbsRoot).catch(() => [] as string[])) if (PHOTO_ID.test(n)) names.add(n);
    const page = [...names].sort().filter((n) => cursor === undefined || n > cursor);
    const ids = new Map<string, number>();
    for (const id of page.slice(0, limit)) {
      const times = await Promise.all(
        [stat(join(this.root, id)), stat(join(this.#thumbsRoot, id))].map((p) =>
          p.then(
            (s) => s.mtimeMs,
            () => 0,
          ),
        ),
      );
      ids.set(id, Math.max(...times));
    }
    return { ids, next: page.length > limit ? page[limit - 1] : undefined };
  }

  /**
   * Partial uploads and renders left by a process that was killed (docs/reference/photos.md):
   * removed at start. Files of live processes (other workers on this data folder) are kept;
   * pending-photo marks are left for the service's recovery, which needs the rows to decide.
   */
  #sweepTemp(): void {
    for (const name of readdirSync(this.tempDir)) {
      if (name.endsWith('.pending')) continue;
      const p = join(this.tempDir, name);
      try {
        if (leftOver(name, statSync(p).mtimeMs)) rmSync(p, { recursive: true, force: true });
      } catch {
        // Raced with another remover: nothing to do.
      }
    }
  }
}

export function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

/** Makes a rename inside `dir` durable. Some platforms cannot fsync a folder; that is not fatal. */
export async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // EISDIR / EPERM on platforms without directory fsync.
  } finally {
    await handle?.close();
  }
}
