import { describe, expect, it } from 'vitest';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HEAD_MAX, UploadInspector, type InspectLimits } from './inspect.js';
import { makeImage } from './test-support.js';

/** Runs `bytes` through an inspector in chunks of `chunkSize`; answers what came out and what it saw. */
async function inspect(bytes: Buffer, limits: InspectLimits, chunkSize: number) {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  const inspector = new UploadInspector(limits);
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks),
    inspector,
    new Writable({
      write(chunk: Buffer, _e, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return { out: Buffer.concat(out), mimeType: inspector.mimeType, dimensions: inspector.dimensions, size: inspector.size };
}

const limits: InspectLimits = { maxBytes: 1 << 20, allowedMimeTypes: ['image/png', 'image/jpeg'] };

describe('UploadInspector', () => {
  it('passes every byte through and finds type and size, even one byte at a time', async () => {
    const jpeg = await makeImage('jpeg', 31, 7);
    const app = Buffer.alloc(40_004, 0x20);
    app.writeUInt16BE(0xffe1, 0);
    app.writeUInt16BE(40_002, 2);
    const bytes = Buffer.concat([jpeg.subarray(0, 2), app, jpeg.subarray(2)]);
    const r = await inspect(bytes, limits, 1);
    expect(r.out.equals(bytes)).toBe(true);
    expect(r).toMatchObject({ mimeType: 'image/jpeg', dimensions: { width: 31, height: 7 }, size: bytes.length });
  });

  it('leaves the size to the caller when the header is past HEAD_MAX', async () => {
    const jpeg = await makeImage('jpeg', 8, 8);
    const segments = Array.from({ length: Math.ceil(HEAD_MAX / 65537) + 1 }, () => {
      const s = Buffer.alloc(65537, 0);
      s.writeUInt16BE(0xffef, 0);
      s.writeUInt16BE(65535, 2);
      return s;
    });
    const bytes = Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
    const r = await inspect(bytes, limits, 64 * 1024);
    expect(r).toMatchObject({ mimeType: 'image/jpeg', dimensions: null });
  });

  it('fails with 413 on the first byte past the limit, and 415 on a wrong signature', async () => {
    const png = await makeImage('png', 8, 8);
    await expect(inspect(png, { ...limits, maxBytes: png.length - 1 }, 16)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await expect(inspect(png, { ...limits, maxBytes: png.length }, 16)).resolves.toMatchObject({ size: png.length });
    await expect(inspect(Buffer.from('GIF89a\x01\x00\x01\x00'), limits, 3)).rejects.toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    await expect(inspect(Buffer.from([0x89, 0x50]), limits, 1)).rejects.toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('compares the declared type with the bytes, ignoring multipart defaults', async () => {
    const png = await makeImage('png', 8, 8);
    await expect(inspect(png, { ...limits, declaredType: 'image/jpeg' }, 64)).rejects.toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    await expect(inspect(png, { ...limits, declaredType: 'application/pdf' }, 64)).rejects.toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    for (const declaredType of ['image/PNG; x=1', 'application/octet-stream', 'text/plain', '']) {
      await expect(inspect(png, { ...limits, declaredType }, 64)).resolves.toMatchObject({ mimeType: 'image/png' });
    }
  });
});
