import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBlobStore } from './blob-store.js';

const ID = 'ph_0000000000abcdef1234';

let root: string;
beforeEach(() => {
  root = join(mkdtempSync(join(tmpdir(), 'tb-blobs-')), 'photos');
});
afterEach(() => rmSync(join(root, '..'), { recursive: true, force: true }));

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

describe('FsBlobStore', () => {
  it('creates its folders and commits a temp file by renaming it into place', async () => {
    const store = new FsBlobStore(root);
    expect(existsSync(store.tempDir)).toBe(true);
    const temp = join(store.tempDir, 'up_1.part');
    writeFileSync(temp, 'hello bytes');
    await store.commit(temp, ID);
    expect(existsSync(temp)).toBe(false);
    expect(readFileSync(store.path(ID), 'utf8')).toBe('hello bytes');
    expect(await store.stat(ID)).toMatchObject({ size: 11 });
  });

  it('opens whole files and inclusive byte ranges', async () => {
    const store = new FsBlobStore(root);
    writeFileSync(store.path(ID), '0123456789');
    expect((await readAll(store.open(ID))).toString()).toBe('0123456789');
    expect((await readAll(store.open(ID, { start: 2, end: 4 }))).toString()).toBe('234');
  });

  it('answers null for a missing photo and rejects ids that could escape the folder', async () => {
    const store = new FsBlobStore(root);
    expect(await store.stat('ph_0000000000000000zzzz')).toBeNull();
    for (const bad of ['../etc/passwd', 'ph_../../x', 'ph_ABCDEFGHIJKLMNOPQRST', 'ph_short', 'xx_0000000000abcdef1234', `ph_${'a'.repeat(33)}`, 'ph_0000000000abcdef1234/..']) {
      expect(() => store.path(bad)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
      expect(() => store.thumbDir(bad)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    }
  });

  it('delete removes the photo and all its thumbnails, and tolerates a missing photo', async () => {
    const store = new FsBlobStore(root);
    writeFileSync(store.path(ID), 'x');
    mkdirSync(store.thumbDir(ID), { recursive: true });
    writeFileSync(join(store.thumbDir(ID), '10x10'), 't');
    writeFileSync(join(store.thumbDir(ID), '20x20'), 't');
    const other = 'ph_0000000000abcdef9999';
    writeFileSync(store.path(other), 'y');
    await store.delete(ID);
    expect(existsSync(store.path(ID))).toBe(false);
    expect(existsSync(store.thumbDir(ID))).toBe(false);
    expect(existsSync(store.path(other))).toBe(true);
    await expect(store.delete(ID)).resolves.toBeUndefined();
  });

  it('sweeps temp files a crash left behind, but not fresh ones', () => {
    new FsBlobStore(root);
    const stale = join(root, 'tmp', 'up_old.part');
    const fresh = join(root, 'tmp', 'up_new.part');
    writeFileSync(stale, 'x');
    writeFileSync(fresh, 'y');
    const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    new FsBlobStore(root);
    expect(readdirSync(join(root, 'tmp'))).toEqual(['up_new.part']);
  });
});
