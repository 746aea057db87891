import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { PhotoRow } from '../define/project.js';
import { FsBlobStore } from './blob-store.js';
import { responseSink } from '../http/sink.js';
import { noneMatch, parseRange, servePhoto } from './serve.js';
import { parseThumb, Thumbnailer } from './thumbs.js';
import { errorCode, makeImage, send, startServer, type TestServer } from './test-support.js';

describe('parseRange (RFC 9110 §14.1.2)', () => {
  const size = 1000;
  it('reads the three single-range forms', () => {
    expect(parseRange('bytes=0-499', size)).toEqual({ kind: 'range', start: 0, end: 499 });
    expect(parseRange('bytes=500-', size)).toEqual({ kind: 'range', start: 500, end: 999 });
    expect(parseRange('bytes=-100', size)).toEqual({ kind: 'range', start: 900, end: 999 });
    expect(parseRange('Bytes = 10 - 20', size)).toEqual({ kind: 'range', start: 10, end: 20 });
  });
  it('clamps an end past the file, and a suffix longer than it', () => {
    expect(parseRange('bytes=990-5000', size)).toEqual({ kind: 'range', start: 990, end: 999 });
    expect(parseRange('bytes=-5000', size)).toEqual({ kind: 'range', start: 0, end: 999 });
  });
  it('finds unsatisfiable ranges', () => {
    expect(parseRange('bytes=1000-', size)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=1000-1001', size)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', size)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });
  it('ignores what it does not honour: several ranges, other units, garbage, last < first', () => {
    for (const h of [undefined, '', 'bytes=0-1,5-6', 'items=0-1', 'bytes=abc', 'bytes=-', 'bytes=5-2', 'bytes=1-2-3', 'bytes 0-1']) {
      expect(parseRange(h, size), String(h)).toEqual({ kind: 'none' });
    }
  });
});

describe('noneMatch (weak comparison)', () => {
  it('matches listed tags, W/ prefixes and *', () => {
    expect(noneMatch('"a", "b"', '"b"')).toBe(true);
    expect(noneMatch('W/"b"', '"b"')).toBe(true);
    expect(noneMatch('*', '"b"')).toBe(true);
    expect(noneMatch('"c"', '"b"')).toBe(false);
    expect(noneMatch(undefined, '"b"')).toBe(false);
  });
});

describe('servePhoto over HTTP', () => {
  let base: string;
  let store: FsBlobStore;
  let server: TestServer;
  let png: Buffer;
  let photo: PhotoRow;
  const thumbnails = (): Thumbnailer => thumbs;
  let thumbs: Thumbnailer;

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'tb-serve-'));
    store = new FsBlobStore(join(base, 'photos'));
    thumbs = new Thumbnailer(store);
    png = await makeImage('png', 120, 60);
    photo = { id: 'ph_0000000000serve00001', mimeType: 'image/png', size: png.length, ownerId: null, width: 120, height: 60, createdAt: '2024-01-01T00:00:00.000Z' };
    writeFileSync(store.path(photo.id), png);
    server = await startServer(async (req, res) => {
      const url = new URL(req.url!, 'http://x');
      const row = url.pathname === '/missing' ? { ...photo, id: 'ph_0000000000missing0001' } : photo;
      await servePhoto(req, responseSink(req, res), { photo: row, store, thumb: parseThumb(url.searchParams.get('thumb')), thumbnails: thumbnails() });
    });
  });
  afterAll(async () => {
    await server.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('answers the bytes with type, length, strong ETag, immutable caching and nosniff', async () => {
    const r = await send(server.port, {});
    expect(r.status).toBe(200);
    expect(r.body.equals(png)).toBe(true);
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.headers['content-length']).toBe(String(png.length));
    expect(r.headers['etag']).toMatch(/^"ph_0000000000serve00001-[0-9a-z]+"$/);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['accept-ranges']).toBe('bytes');
  });

  it('marks answers to credentialed requests private', async () => {
    const r = await send(server.port, { headers: { authorization: 'Bearer x' } });
    expect(r.headers['cache-control']).toBe('private, max-age=31536000, immutable');
  });

  it('answers 304 to a matching If-None-Match, with the ETag and no body', async () => {
    const etag = (await send(server.port, {})).headers['etag']!;
    const r = await send(server.port, { headers: { 'if-none-match': `"other", ${etag}` } });
    expect(r.status).toBe(304);
    expect(r.body.length).toBe(0);
    expect(r.headers['etag']).toBe(etag);
    expect((await send(server.port, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });

  it('serves byte ranges with 206 and Content-Range', async () => {
    const a = await send(server.port, { headers: { range: 'bytes=0-9' } });
    expect([a.status, a.headers['content-range'], a.headers['content-length']]).toEqual([206, `bytes 0-9/${png.length}`, '10']);
    expect(a.body.equals(png.subarray(0, 10))).toBe(true);
    const b = await send(server.port, { headers: { range: 'bytes=-7' } });
    expect(b.body.equals(png.subarray(png.length - 7))).toBe(true);
    const c = await send(server.port, { headers: { range: `bytes=${png.length - 3}-` } });
    expect([c.status, c.body.length]).toEqual([206, 3]);
  });

  it('answers 416 with Content-Range: bytes */size when no byte is in range', async () => {
    const r = await send(server.port, { headers: { range: `bytes=${png.length}-` } });
    expect(r.status).toBe(416);
    expect(r.headers['content-range']).toBe(`bytes */${png.length}`);
    expect(errorCode(r)).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('answers the whole photo for several ranges or a stale If-Range', async () => {
    const multi = await send(server.port, { headers: { range: 'bytes=0-1,4-5' } });
    expect([multi.status, multi.body.length]).toEqual([200, png.length]);
    const stale = await send(server.port, { headers: { range: 'bytes=0-1', 'if-range': '"old"' } });
    expect([stale.status, stale.body.length]).toEqual([200, png.length]);
    const etag = multi.headers['etag']!;
    const fresh = await send(server.port, { headers: { range: 'bytes=0-1', 'if-range': etag } });
    expect([fresh.status, fresh.body.length]).toEqual([206, 2]);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const r = await send(server.port, { method: 'HEAD', headers: { range: 'bytes=0-1' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe(String(png.length));
    expect(r.body.length).toBe(0);
  });

  it('serves a thumbnail of the same format with its own ETag', async () => {
    const full = await send(server.port, {});
    const r = await send(server.port, { path: '/?thumb=30x30' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.body.length).toBeLessThan(png.length);
    const meta = await sharp(r.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 30, 15]);
    expect(r.headers['etag']).not.toBe(full.headers['etag']);
    const again = await send(server.port, { path: '/?thumb=30x30', headers: { 'if-none-match': r.headers['etag']! } });
    expect(again.status).toBe(304);
  });

  it('answers 404 when the bytes are missing', async () => {
    const r = await send(server.port, { path: '/missing' });
    expect([r.status, errorCode(r)]).toEqual([404, 'NOT_FOUND']);
  });
});
