/**
 * Copying every photo and thumbnail from the store a server uses to another
 * (`tablebase storage migrate`, docs/reference/object-storage.md). Each object is copied on its
 * own and verified by SHA-256 (the destination's bytes are read back and hashed), so an
 * interrupted run leaves only whole, checked objects behind and a re-run skips them: resumable
 * and idempotent. Bytes are streamed; nothing is held whole in memory.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Bucket } from '../s3/index.js';
import { isMissing, syncDir, tempName, type BlobStore } from './blob-store.js';
import { S3BlobStore } from './s3-blob-store.js';

/** Where copies go: a folder laid out like `<data>/photos/`, or a bucket. */
export interface CopyTarget {
  readonly label: string;
  /** SHA-256 (hex) of the stored object, or null when there is none. */
  checksum(name: string): Promise<string | null>;
  write(name: string, body: Readable): Promise<void>;
}

export interface MigrateReport {
  copied: number;
  unchanged: number;
  missing: string[];
  failed: { name: string; error: string }[];
}

async function sha256(body: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of body) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export function folderTarget(root: string): CopyTarget {
  return {
    label: root,
    async checksum(name) {
      try {
        return await sha256(createReadStream(join(root, name)));
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async write(name, body) {
      const target = join(root, name);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      const temp = join(dirname(target), tempName('mig'));
      try {
        await pipeline(body, createWriteStream(temp, { mode: 0o600, flush: true }));
        await rename(temp, target);
        await syncDir(dirname(target));
      } finally {
        await rm(temp, { force: true });
      }
    },
  };
}

export function bucketTarget(bucket: S3Bucket): CopyTarget {
  return {
    label: bucket.label,
    async checksum(name) {
      const got = await bucket.get(name);
      return got ? sha256(got.body) : null;
    },
    write: (name, body) => bucket.put(name, body),
  };
}

/** The names a photo has in a store: `<id>` and `thumbs/<id>/<WxH>` for each thumbnail. */
async function namesOf(store: BlobStore, id: string): Promise<string[]> {
  const names = [id];
  if (store instanceof S3BlobStore) {
    for await (const o of store.bucket.list(`thumbs/${id}/`)) names.push(o.name);
  } else {
    for (const t of await readdir(store.thumbDir(id)).catch(() => [] as string[])) if (/^\d+x\d+$/.test(t)) names.push(`thumbs/${id}/${t}`);
  }
  return names;
}

/** A stream of one stored object of `store`, or null when it has none. */
async function readFrom(store: BlobStore, name: string): Promise<Readable | null> {
  const [, id, size] = /^(?:thumbs\/)?(ph_[0-9a-z]+)(?:\/(\d+x\d+))?$/.exec(name) ?? [];
  if (!id) return null;
  if (store instanceof S3BlobStore) return (await store.bucket.get(name))?.body ?? null;
  const path = size ? join(store.thumbDir(id), size) : store.path(id);
  if (!size && store.fetch && !(await store.fetch(id))) return null;
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path);
    stream.once('open', () => resolve(stream));
    stream.once('error', (err) => (isMissing(err) ? resolve(null) : reject(err)));
  });
}

/**
 * Copies every photo of `ids` (the `_photos` rows, page by page) and its thumbnails from `source`
 * to `target`; `progress` is told about each object.
 */
export async function migratePhotos(
  source: BlobStore,
  ids: AsyncIterable<string>,
  target: CopyTarget,
  progress: (name: string, outcome: 'copied' | 'unchanged' | 'missing' | 'failed') => void = () => {},
): Promise<MigrateReport> {
  const report: MigrateReport = { copied: 0, unchanged: 0, missing: [], failed: [] };
  for await (const id of ids) {
    for (const name of await namesOf(source, id)) {
      try {
        const first = await readFrom(source, name);
        if (!first) {
          report.missing.push(name);
          progress(name, 'missing');
          continue;
        }
        const want = await sha256(first);
        if ((await target.checksum(name)) === want) {
          report.unchanged++;
          progress(name, 'unchanged');
          continue;
        }
        const body = await readFrom(source, name);
        if (!body) throw new Error('disappeared from the source while copying');
        await target.write(name, body);
        const got = await target.checksum(name);
        if (got !== want) throw new Error(`checksum mismatch after copying (source ${want.slice(0, 12)}…, copy ${got?.slice(0, 12) ?? 'missing'}…)`);
        report.copied++;
        progress(name, 'copied');
      } catch (err) {
        report.failed.push({ name, error: err instanceof Error ? err.message : String(err) });
        progress(name, 'failed');
      }
    }
  }
  return report;
}
