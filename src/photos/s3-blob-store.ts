/**
 * Photo bytes and thumbnails in an S3-compatible bucket (docs/reference/object-storage.md), so a
 * node's disk holds only uploads in progress and a cache of thumbnails, and every node serves
 * every photo.
 *
 * Keys under the URL's prefix mirror the folder layout of FsBlobStore:
 *   <id>                   the original
 *   thumbs/<id>/<W>x<H>    thumbnails, made once by whichever node is asked first
 *
 * Originals are streamed both ways: an upload (already checked in `tmp/`) is sent with lib-storage
 * (multipart for large bodies), a GET is answered from one HEAD and one GET of an absolute byte
 * range. Any failure to reach the bucket becomes 503 UNAVAILABLE and marks the store down until
 * a request (or the health probe) reaches it again.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApiError } from '../core/errors.js';
// Not the s3/ barrel: that loads the AWS SDK, which only an opened bucket (open-store.ts) needs.
import type { S3Bucket } from '../s3/client.js';
import { describeS3Error, isUnavailable } from '../s3/errors.js';
import { FsBlobStore, PHOTO_ID, assertPhotoId, tempName, type BlobScan, type BlobStat, type OpenedBlob } from './blob-store.js';

const THUMB_KEY = /^thumbs\/(ph_[0-9a-z]{16,32})\/\d+x\d+$/;
/** Thumbnail sizes kept in the bucket per photo (the Thumbnailer's default for each node's cache). */
const MAX_THUMBS = 16;
/** The health answer trusts a photo call this recent instead of probing. */
const PROBE_EVERY_MS = 2_000;

export class S3BlobStore extends FsBlobStore {
  readonly bucket: S3Bucket;
  #down = false;
  #lastCall = 0;
  #probing: Promise<'up' | 'down'> | undefined;

  /** `cacheDir` holds `tmp/` and the thumbnail cache (`<data>/photos/`). */
  constructor(cacheDir: string, bucket: S3Bucket) {
    super(cacheDir);
    this.bucket = bucket;
  }

  /**
   * Runs one bucket call. Any failure of the bucket (unreachable, timed out, 5xx, or refusing:
   * access denied, no such bucket) is 503 UNAVAILABLE and marks the store down until a call
   * succeeds; the cause, naming the bucket but no credential, goes to the log with the answer.
   */
  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      const result = await fn();
      this.#down = false;
      this.#lastCall = Date.now();
      return result;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const fromBucket = isUnavailable(err) || isServiceError(err);
      if (fromBucket) {
        this.#down = true;
        this.#lastCall = Date.now();
      }
      throw new ApiError('UNAVAILABLE', 'Photo storage is not answering; retry shortly', {
        headers: { 'Retry-After': '5' },
        cause: new Error(`${what} on ${this.bucket.label}: ${describeS3Error(err)}`),
      });
    }
  }

  /** Sends the checked upload to the bucket, then drops the temp file: the disk keeps no copy. */
  override async commit(tempPath: string, id: string): Promise<void> {
    assertPhotoId(id);
    await this.#call('storing a photo', () => this.bucket.put(id, createReadStream(tempPath)));
    await rm(tempPath, { force: true });
  }

  override async stat(id: string): Promise<BlobStat | null> {
    assertPhotoId(id);
    const head = await this.#call('reading a photo', () => this.bucket.head(id));
    return head ? { size: head.size, mtimeMs: head.lastModified?.getTime() ?? 0 } : null;
  }

  async openBlob(id: string): Promise<OpenedBlob | null> {
    assertPhotoId(id);
    const head = await this.#call('reading a photo', () => this.bucket.head(id));
    if (!head) return null;
    return {
      size: head.size,
      read: async (start, end) => {
        const got = await this.#call('reading a photo', () => this.bucket.get(id, { start, end }));
        if (!got) throw new ApiError('NOT_FOUND', 'No such photo');
        return got.body;
      },
      close: () => Promise.resolve(),
    };
  }

  async copyOriginal(id: string, target: string): Promise<boolean> {
    return this.#download(id, target);
  }

  async #download(name: string, target: string): Promise<boolean> {
    const got = await this.#call('reading a photo', () => this.bucket.get(name));
    if (!got) return false;
    const temp = join(this.tempDir, tempName('dl'));
    try {
      await this.#call('reading a photo', () => pipeline(got.body, createWriteStream(temp, { mode: 0o600 })));
      await rename(temp, target);
      return true;
    } finally {
      await rm(temp, { force: true });
    }
  }

  async fetchThumb(id: string, name: string, target: string): Promise<boolean> {
    await mkdir(this.thumbDir(id), { recursive: true, mode: 0o700 });
    return this.#download(`thumbs/${id}/${name}`, target);
  }

  /**
   * Stores a rendered thumbnail beside its original. The bucket keeps at most `MAX_THUMBS` sizes
   * per photo, like each node's cache (thumbs.ts): otherwise every W×H a client asks for would be
   * kept forever. The oldest sizes go first.
   */
  async saveThumb(id: string, name: string, file: string): Promise<void> {
    assertPhotoId(id);
    await this.#call('storing a thumbnail', async () => {
      await this.bucket.put(`thumbs/${id}/${name}`, createReadStream(file));
      const sizes = [];
      for await (const o of this.bucket.list(`thumbs/${id}/`)) sizes.push(o);
      if (sizes.length <= MAX_THUMBS) return;
      sizes.sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime());
      const drop = sizes.filter((o) => o.name !== `thumbs/${id}/${name}`).slice(0, sizes.length - MAX_THUMBS);
      await this.bucket.delete(drop.map((o) => o.name));
    });
  }

  /** The original, every thumbnail in the bucket, and this node's cached thumbnails. */
  override async delete(id: string): Promise<void> {
    assertPhotoId(id);
    await this.#call('removing a photo', async () => {
      const names = [id];
      for await (const o of this.bucket.list(`thumbs/${id}/`)) names.push(o.name);
      await this.bucket.delete(names);
    });
    await super.delete(id);
  }

  /** Originals only: their keys are the ids, all starting `ph_` (thumbnails sit under `thumbs/`). */
  override async originals(): Promise<string[]> {
    return this.#call('listing photos', async () => {
      const ids: string[] = [];
      for await (const o of this.bucket.list('ph_')) if (PHOTO_ID.test(o.name)) ids.push(o.name);
      return ids;
    });
  }

  override async scan(cursor: string | undefined, limit: number): Promise<BlobScan> {
    return this.#call('listing photos', async () => {
      const ids = new Map<string, number>();
      let last: string | undefined;
      let seen = 0;
      for await (const o of this.bucket.list('', cursor)) {
        last = o.name;
        const id = PHOTO_ID.test(o.name) ? o.name : THUMB_KEY.exec(o.name)?.[1];
        if (id) ids.set(id, Math.max(ids.get(id) ?? 0, o.lastModified.getTime()));
        if (++seen >= limit) return { ids, next: last };
      }
      return { ids, next: undefined };
    });
  }

  /**
   * 'down' while the bucket cannot be reached. Photo calls keep the state current; with none in
   * the last 2 s the bucket is probed (one HEAD, shared by concurrent health checks), so an outage
   * shows on `/health` even when nobody asks for photos, and so does the recovery.
   */
  override async health(): Promise<'up' | 'down'> {
    if (Date.now() - this.#lastCall < PROBE_EVERY_MS) return this.#down ? 'down' : 'up';
    this.#probing ??= this.#call('probing the bucket', () => this.bucket.probe())
      .then(() => 'up' as const)
      .catch(() => 'down' as const)
      .finally(() => (this.#probing = undefined));
    return this.#probing;
  }
}

/** An answer of the S3 service itself (it carries response metadata), as opposed to a local failure. */
function isServiceError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && '$metadata' in err;
}
