/**
 * End-to-end: serving photos (docs/reference/photos.md): the exact bytes with caching headers to anyone,
 * HEAD, conditional and range requests, thumbnails, and 404/400 for what is not there.
 */
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { photoRequests, usePhotoWorld, type Caller } from '../helpers/photos.js';
import { scenarios, type ScenarioContext } from '../helpers/scenario.js';
import { bearer, type TestServer } from '../helpers/server.js';

const w = usePhotoWorld();
const { send, uploaded } = photoRequests(w);
let stranger: Caller, png: Buffer, jpeg: Buffer;
const ctx: ScenarioContext = { server: null as unknown as TestServer, who: {}, vars: {} };
beforeAll(() => {
  ({ stranger, png, jpeg } = w);
  ctx.server = w.s;
});

describe('serve', () => {
  let photo: Awaited<ReturnType<typeof uploaded>>;
  beforeAll(async () => {
    photo = await uploaded(png);
    ctx.vars.photo = photo.id;
  });

  it('answers the exact bytes with type, length, ETag, caching and nosniff, to anyone', async () => {
    const etags = new Set<string | null>();
    for (const [headers, scope] of [
      [{}, 'public'],
      [bearer(stranger.token), 'private'],
    ] as const) {
      const r = await send('GET', `/img/${photo.id}`, { headers });
      expect(r.status).toBe(200);
      expect(r.bytes.equals(png)).toBe(true);
      expect(r.headers.get('content-type')).toBe('image/png');
      expect(r.headers.get('content-length')).toBe(String(png.length));
      expect(r.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      // Ids are never reused, so the bytes may be cached for long; an answer to a request with
      // credentials must not be stored by shared caches (docs/photos.md).
      expect(r.headers.get('cache-control')).toMatch(/max-age=\d+/);
      expect(r.headers.get('cache-control')).toContain(scope);
      etags.add(r.headers.get('etag'));
    }
    expect(etags.size).toBe(1);
  });

  it('HEAD answers the headers without the bytes', async () => {
    const r = await send('HEAD', `/img/${photo.id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe(String(png.length));
    expect(r.bytes.length).toBe(0);
  });

  it('If-None-Match with the ETag answers 304 with no body; another tag answers 200', async () => {
    const etag = (await send('HEAD', `/img/${photo.id}`)).headers.get('etag')!;
    const r = await send('GET', `/img/${photo.id}`, { headers: { 'if-none-match': etag } });
    expect(r.status).toBe(304);
    expect(r.bytes.length).toBe(0);
    expect(r.headers.get('etag')).toBe(etag);
    const other = await send('GET', `/img/${photo.id}`, { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(other.bytes.equals(png)).toBe(true);
  });

  it('a byte range answers 206 with exactly those bytes', async () => {
    const r = await send('GET', `/img/${photo.id}`, { headers: { range: 'bytes=10-99' } });
    expect(r.status).toBe(206);
    expect(r.headers.get('content-range')).toBe(`bytes 10-99/${png.length}`);
    expect(r.headers.get('content-length')).toBe('90');
    expect(r.bytes.equals(png.subarray(10, 100))).toBe(true);
    const suffix = await send('GET', `/img/${photo.id}`, { headers: { range: 'bytes=-16' } });
    expect(suffix.status).toBe(206);
    expect(suffix.bytes.equals(png.subarray(png.length - 16))).toBe(true);
    const beyond = await send('GET', `/img/${photo.id}`, { headers: { range: `bytes=${png.length + 10}-` } });
    expect(beyond.status).toBe(416);
  });

  it('?thumb=WxH answers a smaller copy in the same format that fits inside W×H', async () => {
    const r = await send('GET', `/img/${photo.id}?thumb=32x32`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(r.headers.get('content-length')).toBe(String(r.bytes.length));
    const meta = await sharp(r.bytes).metadata();
    expect(meta.format).toBe('png');
    // 64×48 into 32×32 keeping the aspect ratio: 32×24.
    expect([meta.width, meta.height]).toEqual([32, 24]);
    expect(r.headers.get('etag')).not.toBe((await send('HEAD', `/img/${photo.id}`)).headers.get('etag'));
    // Made once and cached: a second request answers the same bytes.
    const again = await send('GET', `/img/${photo.id}?thumb=32x32`);
    expect(again.bytes.equals(r.bytes)).toBe(true);
  });

  it('a JPEG thumbnail stays a JPEG', async () => {
    const j = await uploaded(jpeg, 'image/jpeg');
    const r = await send('GET', `/img/${j.id}?thumb=45x100`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/jpeg');
    const meta = await sharp(r.bytes).metadata();
    expect(meta.format).toBe('jpeg');
    expect([meta.width, meta.height]).toEqual([45, 30]);
  });

  scenarios(
    '400 for absurd or malformed thumbnail sizes',
    ctx,
    ['0x0', '0x10', '100000x100000', '5000x10', '-5x10', 'abc', '10', '10x', 'x10', '1.5x2', '10x10x10', ''].map((thumb) => ({
      name: `/img/<photo>?thumb=${thumb}`,
      method: 'GET',
      path: (c: ScenarioContext) => `/img/${c.vars.photo}?thumb=${encodeURIComponent(thumb)}`,
      status: 400,
      code: 'BAD_REQUEST',
    })),
  );

  scenarios(
    '404 for an unknown or malformed photo id',
    ctx,
    ['ph_0000000000000000', 'nope', 'ph_..%2F..%2Fdb.sqlite'].map((id) => ({ name: 'unknown or malformed id', method: 'GET', path: `/img/${id}`, status: 404, code: 'NOT_FOUND' })),
  );
});
