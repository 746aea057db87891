import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../storage/driver.js';
import { postgresHarness } from '../storage/test-drivers.js';
import { DbBlobStore, prepareBlobTable } from './db-blob-store.js';

let driver: Driver;
let dispose: () => Promise<void>;
const roots: string[] = [];
const root = () => {
  const r = mkdtempSync(join(tmpdir(), 'tb-dbblob-'));
  roots.push(r);
  return r;
};
beforeAll(async () => {
  ({ driver, dispose } = await postgresHarness.open());
  await prepareBlobTable(driver);
  await prepareBlobTable(driver); // idempotent: every node runs it at start
});
afterAll(async () => {
  await dispose?.();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe('DbBlobStore on PostgreSQL', () => {
  it('stores a photo in parts and brings it onto another node’s disk byte for byte', async () => {
    const bytes = randomBytes(600 * 1024 + 17); // three parts, the last one short
    const nodeA = new DbBlobStore(root(), driver);
    const nodeB = new DbBlobStore(root(), driver);
    const id = 'ph_0000000000000000abcdef';
    const temp = join(nodeA.tempDir, 'upload.part');
    writeFileSync(temp, bytes);
    await nodeA.commit(temp, id);
    expect((await driver.all(`SELECT part FROM _blobs WHERE key = $1 ORDER BY part`, [id])).map((r) => r.part)).toEqual([0, 1, 2]);
    expect(await nodeB.stat(id)).toMatchObject({ size: bytes.length });
    expect(readFileSync(nodeB.path(id)).equals(bytes)).toBe(true);
  });

  it('keeps thumbnails for other nodes and deletes photo and thumbnails together', async () => {
    const nodeA = new DbBlobStore(root(), driver);
    const nodeB = new DbBlobStore(root(), driver);
    const id = 'ph_0000000000000000thumbs';
    const temp = join(nodeA.tempDir, 'upload.part');
    writeFileSync(temp, Buffer.from('original'));
    await nodeA.commit(temp, id);
    const thumb = join(nodeA.tempDir, 'thumb');
    writeFileSync(thumb, Buffer.from('small'));
    await nodeA.saveThumb(id, '8x8', thumb);
    const target = join(nodeB.thumbDir(id), '8x8');
    expect(await nodeB.fetchThumb(id, '8x8', target)).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('small');
    await nodeB.delete(id);
    expect(await nodeA.fetchThumb(id, '8x8', join(nodeA.thumbDir(id), '8x8'))).toBe(false);
    expect(await new DbBlobStore(root(), driver).stat(id)).toBeNull();
  });

  it('answers null for a photo no node stored', async () => {
    expect(await new DbBlobStore(root(), driver).stat('ph_0000000000000000nothere')).toBeNull();
  });
});
