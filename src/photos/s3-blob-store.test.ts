import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { openS3, type S3Bucket } from '../s3/index.js';
import { startTestS3, type TestS3 } from '../s3/test-server.js';
import { S3BlobStore } from './s3-blob-store.js';

const ID = 'ph_0000000000000abc';

describe('S3BlobStore', () => {
  let dir: string;
  let s3: TestS3;
  let bucket: S3Bucket;
  let store: S3BlobStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-s3store-'));
    s3 = await startTestS3('tablebase-store');
    bucket = openS3(`s3://${s3.bucket}/unit`, s3.env);
    store = new S3BlobStore(dir, bucket);
  }, 30_000);
  afterAll(async () => {
    bucket?.destroy();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('commits an upload to the bucket without keeping a copy on disk, and reads it back by range', async () => {
    const temp = join(store.tempDir, 'upload');
    writeFileSync(temp, '0123456789');
    await store.commit(temp, ID);
    expect(() => readFileSync(temp)).toThrow();
    expect(() => readFileSync(store.path(ID))).toThrow();
    const blob = (await store.openBlob(ID))!;
    expect(blob.size).toBe(10);
    const chunks: Buffer[] = [];
    for await (const c of await blob.read(6, 9)) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('6789');
    expect(await store.openBlob('ph_0000000000000def')).toBeNull();
  });

  it('keeps at most 16 thumbnail sizes per photo in the bucket, the one just made among them', async () => {
    const file = join(dir, 'thumb');
    writeFileSync(file, 'thumb');
    for (let w = 1; w <= 18; w++) await store.saveThumb(ID, `${w}x1`, file);
    const names: string[] = [];
    for await (const o of bucket.list(`thumbs/${ID}/`)) names.push(o.name);
    expect(names).toHaveLength(16);
    expect(names).toContain(`thumbs/${ID}/18x1`);
    await store.delete(ID);
    const left: string[] = [];
    for await (const o of bucket.list()) left.push(o.name);
    expect(left).toEqual([]);
  }, 60_000);

  it('answers 503 while the bucket is down, reports down on health, and up again when it returns', async () => {
    expect(await store.health()).toBe('up');
    await s3.stop();
    try {
      const err = await store.stat(ID).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(503);
      expect((err as ApiError).headers?.['Retry-After']).toBe('5');
      expect(await store.health()).toBe('down');
    } finally {
      await s3.start();
    }
    await new Promise((r) => setTimeout(r, 2_100));
    expect(await store.health()).toBe('up');
  }, 60_000);
});
