import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import type { PhotoRow } from '../define/project.js';
import { FsBlobStore } from './blob-store.js';
import { parseThumb, Thumbnailer } from './thumbs.js';
import { makeImage, type Format } from './test-support.js';

let base: string;
let store: FsBlobStore;
let counter = 0;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'tb-thumbs-'));
  store = new FsBlobStore(join(base, 'photos'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

async function storePhoto(format: Format, width: number, height: number): Promise<PhotoRow> {
  const bytes = await makeImage(format, width, height);
  const id = `ph_${(++counter).toString(36).padStart(20, '0')}`;
  writeFileSync(store.path(id), bytes);
  return { id, mimeType: `image/${format}`, size: bytes.length, ownerId: null, width, height, createdAt: new Date().toISOString() };
}

describe('parseThumb', () => {
  it('accepts WxH with sides 1..4096', () => {
    expect(parseThumb('200x100')).toEqual({ width: 200, height: 100 });
    expect(parseThumb('1x4096')).toEqual({ width: 1, height: 4096 });
    expect(parseThumb(undefined)).toBeNull();
    expect(parseThumb(null)).toBeNull();
  });

  it('refuses anything else with a 400', () => {
    for (const bad of ['', '0x10', '10x0', '4097x10', '10x4097', '10', 'x10', '10x', '10X10', ' 10x10', '10x10 ', '-1x10', '1.5x10', '010x10', '10x10x10', '99999x1', 'axb']) {
      expect(() => parseThumb(bad), bad).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    }
  });
});

describe('Thumbnailer', () => {
  for (const format of ['png', 'jpeg', 'webp', 'gif'] as const) {
    it(`makes a smaller ${format} that fits the box and keeps the aspect ratio`, async () => {
      const photo = await storePhoto(format, 200, 100);
      const thumbs = new Thumbnailer(store);
      const path = await thumbs.get(photo, { width: 50, height: 50 });
      const meta = await sharp(path).metadata();
      expect(meta.format).toBe(format);
      expect([meta.width, meta.height]).toEqual([50, 25]);
      expect(path).toBe(join(store.thumbDir(photo.id), '50x50'));
    });
  }

  it('keeps every frame of an animated GIF', async () => {
    const frame = (red: number) =>
      sharp({ create: { width: 60, height: 30, channels: 3, background: { r: red, g: 0, b: 0 } } })
        .png()
        .toBuffer();
    const gif = await sharp(await Promise.all([frame(10), frame(200), frame(90)]), { join: { animated: true } })
      .gif()
      .toBuffer();
    const id = 'ph_0000000000animated01';
    writeFileSync(store.path(id), gif);
    const photo: PhotoRow = { id, mimeType: 'image/gif', size: gif.length, ownerId: null, width: 60, height: 30, createdAt: '' };
    const meta = await sharp(await new Thumbnailer(store).get(photo, { width: 20, height: 20 }), { animated: true }).metadata();
    expect([meta.format, meta.width, meta.pageHeight, meta.pages]).toEqual(['gif', 20, 10, 3]);
  });

  it('never enlarges', async () => {
    const photo = await storePhoto('png', 40, 20);
    const path = await new Thumbnailer(store).get(photo, { width: 4096, height: 4096 });
    const meta = await sharp(path).metadata();
    expect([meta.width, meta.height]).toEqual([40, 20]);
  });

  it('makes each size once; concurrent requests share the work', async () => {
    const photo = await storePhoto('jpeg', 300, 200);
    const thumbs = new Thumbnailer(store);
    const paths = await Promise.all(Array.from({ length: 6 }, () => thumbs.get(photo, { width: 30, height: 30 })));
    expect(new Set(paths).size).toBe(1);
    expect(thumbs.renders).toBe(1);
    await thumbs.get(photo, { width: 30, height: 30 });
    expect(thumbs.renders).toBe(1);
    await thumbs.get(photo, { width: 31, height: 30 });
    expect(thumbs.renders).toBe(2);
    expect(readdirSync(store.tempDir)).toEqual([]);
  });

  it('keeps at most maxPerPhoto sizes per photo', async () => {
    const photo = await storePhoto('png', 64, 64);
    const thumbs = new Thumbnailer(store, { maxPerPhoto: 3 });
    for (const w of [10, 11, 12, 13, 14]) await thumbs.get(photo, { width: w, height: w });
    const kept = readdirSync(store.thumbDir(photo.id));
    expect(kept).toHaveLength(3);
    expect(kept).toContain('14x14');
  });

  it('refuses an image over the pixel limit without decoding it', async () => {
    // A PNG whose header announces 20000x20000 (400 MP) with a tiny body: libvips must stop at the header.
    const png = Buffer.from(await makeImage('png', 4, 4));
    png.writeUInt32BE(20000, 16);
    png.writeUInt32BE(20000, 20);
    png.writeUInt32BE(crc32(png.subarray(12, 29)), 29); // a valid IHDR, so only the limit can stop it
    const id = 'ph_0000000000bomb000001';
    writeFileSync(store.path(id), png);
    const photo: PhotoRow = { id, mimeType: 'image/png', size: png.length, ownerId: null, width: 20000, height: 20000, createdAt: '' };
    const err = await new Thumbnailer(store).get(photo, { width: 10, height: 10 }).catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(String((err as Error).cause)).toMatch(/pixel limit/);
    expect(readdirSync(store.tempDir)).toEqual([]);
  });

  it('answers 404 for a photo whose bytes are gone, leaving nothing behind', async () => {
    const photo = await storePhoto('png', 20, 20);
    await store.delete(photo.id);
    await expect(new Thumbnailer(store).get(photo, { width: 5, height: 5 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(existsSync(store.thumbDir(photo.id))).toBe(false);
  });
});
