import { describe, expect, it } from 'vitest';
import { normalizeMime, readDimensions, sniffImage, sniffMime, type ImageMime } from './sniff.js';
import { makeImage, type Format } from './test-support.js';

const MIME: Record<Format, ImageMime> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' };

describe('sniffImage on real images made by sharp', () => {
  for (const format of ['png', 'jpeg', 'webp', 'gif'] as const) {
    it(`detects ${format} and reads 37x21`, async () => {
      const bytes = await makeImage(format, 37, 21);
      expect(sniffImage(bytes)).toEqual({ mimeType: MIME[format], dimensions: { width: 37, height: 21 } });
    });
  }

  it('reads lossless WebP (VP8L)', async () => {
    const bytes = await makeImage('webp', 300, 17, { lossless: true });
    expect(bytes.subarray(12, 16).toString('latin1')).toBe('VP8L');
    expect(sniffImage(bytes)?.dimensions).toEqual({ width: 300, height: 17 });
  });

  it('reads extended WebP (VP8X, lossy with alpha)', async () => {
    const bytes = await makeImage('webp', 513, 2, { alpha: true });
    expect(bytes.subarray(12, 16).toString('latin1')).toBe('VP8X');
    expect(sniffImage(bytes)?.dimensions).toEqual({ width: 513, height: 2 });
  });

  it('reads lossy WebP (VP8)', async () => {
    const bytes = await makeImage('webp', 1000, 999);
    expect(bytes.subarray(12, 16).toString('latin1')).toBe('VP8 ');
    expect(sniffImage(bytes)?.dimensions).toEqual({ width: 1000, height: 999 });
  });

  it('walks JPEG segments: a big APP segment and fill bytes before the frame header', async () => {
    const jpeg = await makeImage('jpeg', 64, 48);
    const app = Buffer.alloc(4 + 60000, 0x41);
    app.writeUInt16BE(0xffef, 0); // APP15
    app.writeUInt16BE(60002, 2);
    const fill = Buffer.from([0xff, 0xff, 0xff]); // fill bytes before the next marker
    // SOI, APP15, fill, rest (starting at the first marker after SOI).
    const spliced = Buffer.concat([jpeg.subarray(0, 2), app, fill, jpeg.subarray(2)]);
    expect(sniffImage(spliced)).toEqual({ mimeType: 'image/jpeg', dimensions: { width: 64, height: 48 } });
  });

  it('skips DHT (0xC4) rather than taking it for a frame header', () => {
    // SOI, DHT with bytes that would read as 0x0102 x 0x0304 if taken for SOF, then SOF2 5x7.
    const bytes = Buffer.from([0xff, 0xd8, 0xff, 0xc4, 0x00, 0x07, 0x08, 0x01, 0x02, 0x03, 0x04, 0xff, 0xc2, 0x00, 0x0b, 0x08, 0x00, 0x07, 0x00, 0x05, 0x03]);
    expect(readDimensions(bytes, 'image/jpeg')).toEqual({ width: 5, height: 7 });
  });
});

describe('sniffing hostile input', () => {
  it('rejects non-images', () => {
    expect(sniffMime(Buffer.from('hello, this is a text file pretending to be a png'))).toBeNull();
    expect(sniffMime(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(sniffMime(Buffer.from('RIFF\0\0\0\0WAVEfmt '))).toBeNull();
    expect(sniffMime(Buffer.alloc(0))).toBeNull();
  });

  it('never throws on any truncation of a real image, and finds no size in a cut header', async () => {
    for (const format of ['png', 'jpeg', 'webp', 'gif'] as const) {
      const bytes = await makeImage(format, 20, 10);
      for (let n = 0; n <= Math.min(bytes.length, 400); n++) {
        const cut = bytes.subarray(0, n);
        const r = sniffImage(cut);
        // A prefix either lacks the header (null) or holds the true size: never a wrong one.
        if (r?.dimensions) expect(r.dimensions).toEqual({ width: 20, height: 10 });
      }
      expect(sniffImage(bytes.subarray(0, 5))?.dimensions ?? null).toBeNull();
    }
  });

  it('never throws on random bytes behind each signature', () => {
    const heads = [[0xff, 0xd8, 0xff], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [...Buffer.from('GIF89a')], [...Buffer.from('RIFF\x10\0\0\0WEBPVP8X')]];
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    for (const head of heads) {
      for (let i = 0; i < 300; i++) {
        const tail = Buffer.alloc(rand() % 64, 0).map(() => rand());
        const buf = Buffer.concat([Buffer.from(head), tail]);
        expect(() => sniffImage(buf)).not.toThrow();
      }
    }
  });

  it('stops on bad JPEG segment lengths instead of looping or overreading', () => {
    expect(readDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00]), 'image/jpeg')).toBeNull(); // length 0
    expect(readDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0x00]), 'image/jpeg')).toBeNull(); // runs past the end
    expect(readDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08]), 'image/jpeg')).toBeNull(); // SOS before a frame
    expect(readDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00]), 'image/jpeg')).toBeNull(); // SOF cut short
    expect(readDimensions(Buffer.from([0xff, 0xd8, 0x12, 0x34]), 'image/jpeg')).toBeNull(); // no marker
  });

  it('refuses zero sizes and a PNG whose first chunk is not IHDR', async () => {
    const png = Buffer.from(await makeImage('png', 4, 4));
    png.writeUInt32BE(0, 16); // width 0
    expect(readDimensions(png, 'image/png')).toBeNull();
    const other = Buffer.from(await makeImage('png', 4, 4));
    other.write('tEXt', 12, 'latin1');
    expect(readDimensions(other, 'image/png')).toBeNull();
  });
});

describe('normalizeMime', () => {
  it('lowercases, drops parameters and folds aliases', () => {
    expect(normalizeMime('Image/JPG; charset=binary')).toBe('image/jpeg');
    expect(normalizeMime(' image/png ')).toBe('image/png');
    expect(normalizeMime('multipart/form-data; boundary=x')).toBe('multipart/form-data');
  });
});
