/**
 * Which blob store a server uses (docs/reference/object-storage.md):
 *   s3://bucket/prefix  S3BlobStore; the bucket must answer at start, or the start fails with one
 *                       line naming the endpoint (never a credential)
 *   file:///path        that folder (on PostgreSQL, with `_blobs` as before, so nodes share it)
 *   unset               `<data>/photos/`, and `_blobs` on PostgreSQL (db-store-for.ts)
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Driver } from '../storage/driver.js';
import { isS3Url } from '../s3/config.js';
import { describeS3Error } from '../s3/errors.js';
import { FsBlobStore } from './blob-store.js';
import { DbBlobStore, prepareBlobTable } from './db-blob-store.js';
import { photoStoreFor } from './db-store-for.js';
import { S3BlobStore } from './s3-blob-store.js';

/**
 * The photo store of a SQLite deployment, for commands that run beside (or without) its server
 * (`tablebase backup create`): the same choice as `openPhotoStore`, no database needed. The
 * caller closes it with `close`.
 */
export async function openSqlitePhotoStore(storageUrl: string | undefined, dataDir: string): Promise<{ store: FsBlobStore; close: () => void }> {
  if (storageUrl !== undefined && isS3Url(storageUrl)) {
    const store = (await openPhotoStore(storageUrl, undefined, dataDir)) as S3BlobStore;
    return { store, close: () => store.bucket.destroy() };
  }
  const root = storageUrl === undefined ? join(dataDir, 'photos') : fileURLToPath(storageUrl);
  return { store: new FsBlobStore(root), close: () => {} };
}

export async function openPhotoStore(storageUrl: string | undefined, driver: Driver | undefined, dataDir: string): Promise<FsBlobStore | undefined> {
  if (storageUrl === undefined) return driver ? photoStoreFor(driver, dataDir) : undefined;
  if (isS3Url(storageUrl)) {
    // The AWS SDK is loaded only here, when a bucket is configured: a start without one skips it (~300 ms of CPU).
    const { openS3 } = await import('../s3/client.js');
    const bucket = openS3(storageUrl);
    try {
      await bucket.probe();
    } catch (err) {
      bucket.destroy();
      throw new Error(`photo storage ${bucket.label} is not reachable: ${describeS3Error(err)}`);
    }
    return new S3BlobStore(join(dataDir, 'photos'), bucket);
  }
  const root = fileURLToPath(storageUrl);
  // A database only this process serves (SQLite) needs no shared copy; one shared by nodes does.
  if (!driver?.dialect.sharedByNodes) return new FsBlobStore(root);
  await prepareBlobTable(driver);
  return new DbBlobStore(root, driver);
}
