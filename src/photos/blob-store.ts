/**
 * Where photo bytes live (SPEC §1: `<data>/photos/`). An interface so another backend (object
 * storage) can replace the filesystem later; `FsBlobStore` is the one we ship.
 *
 * Layout under the root:
 *   <id>                  the original bytes, named by the (validated) photo id
 *   tmp/                  uploads in progress; on the same filesystem so commit is one rename
 *   thumbs/<id>/<W>x<H>   cached thumbnails; one folder per photo so delete removes them at once
 */
import { createReadStream, mkdirSync, readdirSync, rmSync, statSync, type ReadStream } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../core/errors.js';

/** Photo ids (SPEC §3, prefix `ph`). Checked before any path is built, so no traversal. */
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
}

export function assertPhotoId(id: string): void {
  // An id that cannot exist is an unknown photo, not a server error.
  if (!PHOTO_ID.test(id)) throw new ApiError('NOT_FOUND', 'No such photo');
}

/** Temp files older than this at startup were left by a crash. */
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
    // survive a crash (SPEC §6 durability, applied to the blob its row points at).
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

  #sweepTemp(): void {
    const cutoff = Date.now() - STALE_TEMP_MS;
    for (const name of readdirSync(this.tempDir)) {
      const p = join(this.tempDir, name);
      try {
        if (statSync(p).mtimeMs < cutoff) rmSync(p, { recursive: true, force: true });
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
