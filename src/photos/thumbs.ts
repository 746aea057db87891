/**
 * Thumbnails for `GET /img/{id}?thumb=WxH` (docs/reference/photos.md): a copy that fits inside W×H,
 * keeping the aspect ratio and the original's format, never enlarged. Each size is made once and
 * cached under the blob store; concurrent requests for one size share one promise.
 *
 * Bounds, because every W×H pair is a distinct cache entry and decoding is costly:
 * - sides are 1..4096;
 * - at most `maxPerPhoto` sizes are kept per photo (the oldest is evicted);
 * - at most `concurrency` thumbnails are rendered at once;
 * - libvips refuses inputs over `MAX_PIXELS` (`limitInputPixels`), so a bomb that slipped past
 *   the upload check still cannot exhaust memory.
 */
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import type Sharp from 'sharp';
import { ApiError } from '../core/errors.js';
import type { PhotoRow } from '../define/project.js';
import { isMissing, tempName, type BlobStore } from './blob-store.js';
import { MAX_PIXELS } from './inspect.js';

// Loaded on first use, not at start (issue #25: a start loads only what the first request needs).
let sharpModule: typeof Sharp | undefined;
export const loadSharp = (): typeof Sharp => (sharpModule ??= createRequire(import.meta.url)('sharp') as typeof Sharp);

export const MAX_THUMB_SIDE = 4096;

export interface ThumbSize {
  width: number;
  height: number;
}

const THUMB = /^([1-9][0-9]{0,3})x([1-9][0-9]{0,3})$/;

/** `?thumb=WxH` → size; absent → null; anything malformed or out of 1..4096 → 400. */
export function parseThumb(value: string | null | undefined): ThumbSize | null {
  if (value === null || value === undefined) return null;
  const m = THUMB.exec(value);
  const width = m ? Number(m[1]) : 0;
  const height = m ? Number(m[2]) : 0;
  if (!m || width > MAX_THUMB_SIDE || height > MAX_THUMB_SIDE) {
    throw new ApiError('BAD_REQUEST', `thumb must be WxH with whole numbers from 1 to ${MAX_THUMB_SIDE}`, {
      details: [{ path: '/thumb', message: 'must look like 200x200' }],
    });
  }
  return { width, height };
}

export interface ThumbnailerOptions {
  /** Cached sizes kept per photo; default 16. */
  maxPerPhoto?: number;
  /** Renders at once; default 2 (the machine budget is small and libvips is multi-threaded). */
  concurrency?: number;
}

const FORMATS: Record<string, 'jpeg' | 'png' | 'webp' | 'gif'> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

export class Thumbnailer {
  readonly #store: BlobStore;
  readonly #maxPerPhoto: number;
  readonly #concurrency: number;
  readonly #inFlight = new Map<string, Promise<string>>();
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #renders = 0;

  constructor(store: BlobStore, options: ThumbnailerOptions = {}) {
    this.#store = store;
    this.#maxPerPhoto = Math.max(1, options.maxPerPhoto ?? 16);
    this.#concurrency = Math.max(1, options.concurrency ?? 2);
  }

  /** Thumbnails rendered since start (cache misses), for metrics and tests. */
  get renders(): number {
    return this.#renders;
  }

  /** Path of the cached thumbnail, made now if needed. */
  async get(photo: PhotoRow, size: ThumbSize): Promise<string> {
    const name = `${size.width}x${size.height}`;
    const target = join(this.#store.thumbDir(photo.id), name);
    if (await exists(target)) return target;
    if (await this.#store.fetchThumb?.(photo.id, name, target)) return target;
    const key = `${photo.id}/${name}`;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#make(photo, size, target).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #make(photo: PhotoRow, size: ThumbSize, target: string): Promise<string> {
    const format = FORMATS[photo.mimeType];
    if (!format) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Thumbnails cannot be made for this photo type');
    await this.#acquire();
    const temp = join(this.#store.tempDir, tempName('th'));
    // Stores that keep originals elsewhere hand over a temporary copy to render from.
    const copy = this.#store.copyOriginal ? join(this.#store.tempDir, tempName('src')) : null;
    try {
      this.#renders++;
      if (copy) {
        if (!(await this.#store.copyOriginal!(photo.id, copy))) throw new ApiError('NOT_FOUND', 'No such photo');
      } else await this.#store.fetch?.(photo.id);
      await this.#render(copy ?? this.#store.path(photo.id), temp, format, size);
      await fsyncFile(temp); // a cached thumb is served for a year: never let a crash leave a torn one
      const dir = this.#store.thumbDir(photo.id);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await this.#evict(dir);
      await rename(temp, target);
      await this.#store.saveThumb?.(photo.id, basename(target), target);
      // The photo may have been deleted while we rendered: do not leave an orphan folder.
      if (!(await this.#store.stat(photo.id))) {
        await rm(dir, { recursive: true, force: true });
        throw new ApiError('NOT_FOUND', 'No such photo');
      }
      return target;
    } finally {
      await rm(temp, { force: true });
      if (copy) await rm(copy, { force: true });
      this.#release();
    }
  }

  async #render(source: string, temp: string, format: 'jpeg' | 'png' | 'webp' | 'gif', size: ThumbSize): Promise<void> {
    const animated = format === 'gif' || format === 'webp';
    let image = loadSharp()(source, { limitInputPixels: MAX_PIXELS, animated });
    // Honour EXIF orientation so the thumb looks like the original does in a browser.
    if (format === 'jpeg') image = image.rotate();
    image = image.resize({ width: size.width, height: size.height, fit: 'inside', withoutEnlargement: true });
    try {
      await image.toFormat(format).toFile(temp);
    } catch (err) {
      if (isMissing(err) || /no such file|input file is missing/i.test(String((err as Error).message))) {
        throw new ApiError('NOT_FOUND', 'No such photo');
      }
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'A thumbnail cannot be made from this photo', { cause: err });
    }
  }

  /** Keeps at most `maxPerPhoto - 1` sizes before adding one, dropping the oldest. */
  async #evict(dir: string): Promise<void> {
    const names = await readdir(dir);
    if (names.length < this.#maxPerPhoto) return;
    const aged = await Promise.all(
      names.map(async (n) => ({
        n,
        t: await stat(join(dir, n)).then(
          (s) => s.mtimeMs,
          () => 0,
        ),
      })),
    );
    aged.sort((a, b) => a.t - b.t);
    for (const { n } of aged.slice(0, names.length - this.#maxPerPhoto + 1)) await rm(join(dir, n), { force: true });
  }

  #acquire(): Promise<void> {
    if (this.#running < this.#concurrency) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next)
      next(); // the slot passes straight to the next waiter
    else this.#running--;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
