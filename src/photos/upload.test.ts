import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { receiveUpload } from './upload.js';
import { errorCode, makeImage, multipart, send, startServer, type TestServer } from './test-support.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let tempDir: string;
let server: TestServer;
/** Settles when the handler of the latest request has finished (its temp file is gone by then). */
let handled: Promise<unknown> = Promise.resolve();
let lastBytesRead = 0;
/** Called when a request reaches the handler. */
let onStart: () => void = () => {};

beforeAll(async () => {
  tempDir = mkdtempSync(join(tmpdir(), 'tb-upload-'));
  server = await startServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    const maxBytes = Number(url.searchParams.get('max') ?? 262144);
    const allowedMimeTypes = (url.searchParams.get('allow') ?? 'image/png,image/jpeg').split(',');
    onStart();
    req.socket.once('close', () => (lastBytesRead = req.socket.bytesRead));
    const work = receiveUpload(req, { maxBytes, allowedMimeTypes, tempDir });
    handled = work.catch(() => {});
    const r = await work;
    const stored = await readFile(r.tempPath);
    await rm(r.tempPath);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...r, tempPath: undefined, sha256: sha(stored), storedSize: stored.length }));
  });
});

afterAll(async () => {
  await server.close();
  rmSync(tempDir, { recursive: true, force: true });
});

afterEach(async () => {
  await handled;
  // Every path, success or failure, leaves the temp folder empty.
  expect(readdirSync(tempDir)).toEqual([]);
});

const json = (b: Buffer) => JSON.parse(b.toString('utf8')) as Record<string, unknown>;

describe('receiveUpload: accepted uploads', () => {
  it('stores a multipart PNG byte for byte, with its type and size', async () => {
    const png = await makeImage('png', 40, 30);
    const form = multipart([
      { name: 'caption', data: 'ignored field' },
      { name: 'file', filename: 'a.png', contentType: 'image/png', data: png },
    ]);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': form.contentType }, body: form.body });
    expect(r.status).toBe(200);
    expect(json(r.body)).toMatchObject({ size: png.length, storedSize: png.length, sha256: sha(png), mimeType: 'image/png', width: 40, height: 30 });
  });

  it('stores a raw JPEG body', async () => {
    const jpeg = await makeImage('jpeg', 17, 9);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/jpeg' }, body: jpeg });
    expect(r.status).toBe(200);
    expect(json(r.body)).toMatchObject({ sha256: sha(jpeg), mimeType: 'image/jpeg', width: 17, height: 9 });
  });

  it('accepts a part declared application/octet-stream and decides the type from the bytes', async () => {
    const gif = await makeImage('gif', 5, 6);
    const form = multipart([{ name: 'file', filename: 'blob', contentType: 'application/octet-stream', data: gif }]);
    const r = await send(server.port, { method: 'POST', path: '/img?allow=image/gif', headers: { 'content-type': form.contentType }, body: form.body });
    expect(r.status).toBe(200);
    expect(json(r.body)).toMatchObject({ mimeType: 'image/gif', width: 5, height: 6 });
  });

  it('accepts exactly maxBytes', async () => {
    const png = await makeImage('png', 16, 16);
    const r = await send(server.port, { method: 'POST', path: `/img?max=${png.length}`, headers: { 'content-type': 'image/png' }, body: png });
    expect(r.status).toBe(200);
  });

  it('reads the size from the file when the JPEG header is past the first 256 KiB', async () => {
    const jpeg = await makeImage('jpeg', 33, 44);
    const segments = Array.from({ length: 5 }, () => {
      const s = Buffer.alloc(65537, 0x20);
      s.writeUInt16BE(0xffef, 0);
      s.writeUInt16BE(65535, 2);
      return s;
    });
    const big = Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
    const r = await send(server.port, { method: 'POST', path: '/img?max=1000000', headers: { 'content-type': 'image/jpeg' }, body: big });
    expect(r.status).toBe(200);
    expect(json(r.body)).toMatchObject({ width: 33, height: 44, sha256: sha(big) });
  });
});

describe('receiveUpload: 415', () => {
  it('refuses a text file named .png and declared image/png', async () => {
    const form = multipart([{ name: 'file', filename: 'notes.png', contentType: 'image/png', data: 'just some text, not an image at all' }]);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': form.contentType }, body: form.body });
    expect(r.status).toBe(415);
    expect(errorCode(r)).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses JPEG bytes declared image/png when only PNG is allowed', async () => {
    const jpeg = await makeImage('jpeg', 8, 8);
    const r = await send(server.port, { method: 'POST', path: '/img?allow=image/png', headers: { 'content-type': 'image/png' }, body: jpeg });
    expect(r.status).toBe(415);
  });

  it('refuses JPEG bytes declared image/png even when JPEG is allowed (declared type disagrees)', async () => {
    const jpeg = await makeImage('jpeg', 8, 8);
    const form = multipart([{ name: 'file', filename: 'x.png', contentType: 'image/png', data: jpeg }]);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': form.contentType }, body: form.body });
    expect(r.status).toBe(415);
  });

  it('refuses a WebP when the allow-list is PNG and JPEG', async () => {
    const webp = await makeImage('webp', 8, 8);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/webp' }, body: webp });
    expect(r.status).toBe(415);
  });

  it('refuses a decompression bomb: a PNG header announcing 40000x40000', async () => {
    const png = Buffer.from(await makeImage('png', 4, 4));
    png.writeUInt32BE(40000, 16);
    png.writeUInt32BE(40000, 20);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/png' }, body: png });
    expect(r.status).toBe(415);
    expect(json(r.body)).toMatchObject({ error: { message: expect.stringMatching(/dimensions/) } });
  });

  it('refuses 20000x10000 (200 megapixels, each side within bounds)', async () => {
    const png = Buffer.from(await makeImage('png', 4, 4));
    png.writeUInt32BE(20000, 16);
    png.writeUInt32BE(10000, 20);
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/png' }, body: png });
    expect(r.status).toBe(415);
  });

  it('refuses a signature with no readable header', async () => {
    const r = await send(server.port, { method: 'POST', path: '/img', headers: { 'content-type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]) });
    expect(r.status).toBe(415);
  });
});

describe('receiveUpload: 400', () => {
  it('needs a file part named "file"', async () => {
    const png = await makeImage('png', 4, 4);
    const none = multipart([{ name: 'caption', data: 'x' }]);
    expect((await send(server.port, { method: 'POST', headers: { 'content-type': none.contentType }, body: none.body })).status).toBe(400);
    const wrong = multipart([{ name: 'photo', filename: 'a.png', contentType: 'image/png', data: png }]);
    expect((await send(server.port, { method: 'POST', headers: { 'content-type': wrong.contentType }, body: wrong.body })).status).toBe(400);
  });

  it('refuses two file parts', async () => {
    const png = await makeImage('png', 4, 4);
    const two = multipart([
      { name: 'file', filename: 'a.png', contentType: 'image/png', data: png },
      { name: 'file', filename: 'b.png', contentType: 'image/png', data: png },
    ]);
    expect((await send(server.port, { method: 'POST', headers: { 'content-type': two.contentType }, body: two.body })).status).toBe(400);
  });

  it('refuses other content types, a missing boundary, an empty body and a truncated form', async () => {
    const png = await makeImage('png', 4, 4);
    const cases: [string, Buffer][] = [
      ['application/json', Buffer.from('{}')],
      ['multipart/form-data', png],
      ['image/png', Buffer.alloc(0)],
    ];
    for (const [ct, body] of cases) {
      const r = await send(server.port, { method: 'POST', headers: { 'content-type': ct }, body });
      expect([r.status, errorCode(r)]).toEqual([400, 'BAD_REQUEST']);
    }
    const form = multipart([{ name: 'file', filename: 'a.png', contentType: 'image/png', data: png }]);
    const cut = form.body.subarray(0, form.body.length - 20);
    const r = await send(server.port, { method: 'POST', headers: { 'content-type': form.contentType }, body: cut });
    expect(r.status).toBe(400);
  });

  it('cleans up when the client disconnects mid-upload', async () => {
    const png = await makeImage('png', 64, 64);
    const started = new Promise<void>((resolve) => (onStart = resolve));
    const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/img', headers: { 'content-type': 'image/png', 'content-length': png.length * 4 } });
    req.on('error', () => {});
    req.write(png);
    await started;
    // Let the first bytes reach the temp file, then vanish.
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    await expect(handled).resolves.toBeUndefined();
    onStart = () => {};
  });
});

describe('receiveUpload: 413', () => {
  it('refuses one byte over the limit, multipart and raw', async () => {
    const png = await makeImage('png', 32, 32);
    const max = png.length - 1;
    const raw = await send(server.port, { method: 'POST', path: `/img?max=${max}`, headers: { 'content-type': 'image/png' }, body: png });
    expect([raw.status, errorCode(raw)]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const form = multipart([{ name: 'file', filename: 'a.png', contentType: 'image/png', data: png }]);
    const mp = await send(server.port, { method: 'POST', path: `/img?max=${max}`, headers: { 'content-type': form.contentType }, body: form.body });
    expect([mp.status, errorCode(mp)]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
  });

  it('refuses a Content-Length over the limit before reading', async () => {
    const r = await streamUpload(50 * 1024 * 1024, true);
    expect(r.status).toBe(413);
    expect(lastBytesRead).toBeLessThan(4 * 1024 * 1024);
  });

  it('cuts off a 50 MB chunked upload early and keeps memory flat', async () => {
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const r = await streamUpload(50 * 1024 * 1024, false);
    clearInterval(sampler);
    const rssAfter = process.memoryUsage().rss;
    console.log(
      `[photos] 50 MB chunked upload: status ${r.status}; client wrote ${(r.written / 1048576).toFixed(1)} MiB; ` +
        `server socket read ${(lastBytesRead / 1048576).toFixed(2)} MiB; rss before ${(rssBefore / 1048576).toFixed(1)} MiB, ` +
        `peak ${(peak / 1048576).toFixed(1)} MiB, after ${(rssAfter / 1048576).toFixed(1)} MiB`,
    );
    expect(r.status).toBe(413);
    // The server stopped reading: far less than 50 MB crossed its socket.
    expect(lastBytesRead).toBeLessThan(4 * 1024 * 1024);
    expect(r.written).toBeLessThan(50 * 1024 * 1024);
  });

  it('cuts off a 50 MB multipart upload early too', async () => {
    const r = await streamUpload(50 * 1024 * 1024, false, true);
    console.log(`[photos] 50 MB multipart upload: status ${r.status}; server socket read ${(lastBytesRead / 1048576).toFixed(2)} MiB`);
    expect(r.status).toBe(413);
    expect(lastBytesRead).toBeLessThan(4 * 1024 * 1024);
  });
});

/**
 * Streams `total` bytes (optionally as the one file part of a form that never ends) (a PNG header, then filler) as a raw image/png body, writing only as fast
 * as the socket accepts, and stops at the server's answer.
 */
function streamUpload(total: number, withLength: boolean, asMultipart = false): Promise<{ status: number; written: number }> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const boundary = 'tbstreamboundary';
    const headers: Record<string, string | number> = { 'content-type': asMultipart ? `multipart/form-data; boundary=${boundary}` : 'image/png' };
    if (withLength) headers['content-length'] = total;
    const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path: '/img?max=262144', headers }, (res) => {
      answered = true;
      res.resume();
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, written });
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    makeImage('png', 8, 8).then((image) => {
      const png = asMultipart ? Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`), image]) : image;
      const filler = Buffer.alloc(64 * 1024, 7);
      const pump = () => {
        while (!answered && written < total) {
          const chunk = written === 0 ? png : filler.subarray(0, Math.min(filler.length, total - written));
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!answered) req.end();
      };
      pump();
    }, reject);
  });
}
