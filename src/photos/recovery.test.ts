import { mkdtempSync, rmSync, utimesSync, writeFileSync, readdirSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openS3, type S3Bucket } from '../s3/index.js';
import { startTestS3, type TestS3 } from '../s3/test-server.js';
import { FsBlobStore, leftOver } from './blob-store.js';
import { markPending, PhotoRecovery } from './recovery.js';
import { S3BlobStore } from './s3-blob-store.js';

const id = (n: number) => `ph_${String(n).padStart(16, '0')}`;
const HOUR = 3_600_000;

describe('leftOver', () => {
  it('is true for a file of a dead process or of an earlier process with our pid, false for a live one', () => {
    const now = Date.now();
    expect(leftOver(`up_${process.pid}_abc.part`, now)).toBe(false);
    expect(leftOver(`up_${process.pid}_abc.part`, now - 10 * HOUR)).toBe(true);
    expect(leftOver('up_999999999_abc.part', now)).toBe(true);
    expect(leftOver('db_abc.part', now)).toBe(false);
    expect(leftOver('db_abc.part', now - 2 * HOUR)).toBe(true);
  });
});

describe.each(['fs', 's3'] as const)('PhotoRecovery on the %s store', (kind) => {
  let dir: string;
  let s3: TestS3 | undefined;
  let bucket: S3Bucket | undefined;
  let store: FsBlobStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tb-recovery-'));
    if (kind === 's3') {
      s3 = await startTestS3('tablebase-recovery');
      bucket = openS3(`s3://${s3.bucket}/r`, s3.env);
      store = new S3BlobStore(dir, bucket);
    } else store = new FsBlobStore(dir);
  }, 30_000);
  afterAll(async () => {
    bucket?.destroy();
    await s3?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Stores bytes under `n` (and a thumbnail), as an upload would. */
  async function put(n: number): Promise<void> {
    const temp = join(store.tempDir, `t${n}`);
    writeFileSync(temp, `bytes ${n}`);
    await store.commit(temp, id(n));
    const thumb = join(dir, `thumb${n}`);
    writeFileSync(thumb, 'thumb');
    if (store instanceof S3BlobStore) await store.saveThumb(id(n), '8x8', thumb);
    else {
      const d = store.thumbDir(id(n));
      await mkdir(d, { recursive: true });
      writeFileSync(join(d, '8x8'), 'thumb');
    }
  }

  it('the sweep removes old ids without a row, a page at a time, and keeps young ones and ones with a row', async () => {
    for (let n = 1; n <= 5; n++) await put(n);
    const rows = new Set([id(2)]);
    const removedIds: string[] = [];
    const recovery = new PhotoRecovery({ store, hasRow: async (x) => rows.has(x), report: (err) => expect.fail(String(err)), graceMs: HOUR, pageSize: 2 });
    // Everything is young: nothing goes.
    expect(await recovery.sweepPage()).toBe(0);
    // An hour and a bit later, a page of two ids at a time, resuming where the last stopped.
    const later = Date.now() + 2 * HOUR;
    let removed = 0;
    for (let pass = 0; pass < 4; pass++) removed += await recovery.sweepPage(later);
    expect(removed).toBe(4);
    for (let n = 1; n <= 5; n++) if ((await store.stat(id(n))) === null) removedIds.push(id(n));
    expect(removedIds).toEqual([id(1), id(3), id(4), id(5)]);
    expect(await store.stat(id(2))).not.toBeNull();
    const left = await store.scan(undefined, 100);
    expect([...left.ids.keys()]).toEqual([id(2)]);
  }, 60_000);

  it("a dead process's pending mark without a row has its bytes removed; with a row it is only cleared", async () => {
    await put(7);
    await put(8);
    const dead = 999_999_999;
    for (const n of [7, 8]) {
      const mark = await markPending(store, id(n));
      const renamed = mark.replace(`pending_${process.pid}_`, `pending_${dead}_`);
      await rename(mark, renamed);
      utimesSync(renamed, new Date(), new Date());
    }
    const recovery = new PhotoRecovery({ store, hasRow: async (x) => x === id(8) || x === id(2), report: (err) => expect.fail(String(err)) });
    expect(await recovery.settleMarks()).toBe(1);
    expect(await store.stat(id(7))).toBeNull();
    expect(await store.stat(id(8))).not.toBeNull();
    expect(readdirSync(store.tempDir).filter((n) => n.endsWith('.pending'))).toEqual([]);
  }, 60_000);
});
