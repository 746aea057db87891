/**
 * Answering `GET /img/{id}` for a photo the caller already authorized (docs/reference/photos.md): the bytes with
 * `Content-Type`, `Content-Length`, a strong `ETag`, `Cache-Control`, `X-Content-Type-Options`;
 * `If-None-Match` → 304; single byte ranges → 206 (RFC 9110 §14); HEAD answers headers only.
 *
 * The original is opened once and everything (size, ETag, body) comes from that one opening: a
 * file descriptor, or for object storage one HEAD and then one ranged GET
 * (docs/reference/object-storage.md).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { ApiError } from '../core/errors.js';
import type { RequestHead, Sink } from '../core/sink.js';
import type { PhotoRow } from '../define/project.js';
import { isMissing, type BlobStore, type OpenedBlob } from './blob-store.js';
import { Thumbnailer, type ThumbSize } from './thumbs.js';

export type RangeResult = { kind: 'none' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * One `Range` header against a representation of `size` bytes (RFC 9110 §14.1.2). Only a single
 * range is honoured; several ranges, other units and malformed values are ignored (a full 200),
 * which RFC 9110 §14.2 permits.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (!header) return { kind: 'none' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return { kind: 'none' };
  const [, first, last] = m as unknown as [string, string, string];
  if (first === '' && last === '') return { kind: 'none' };
  if (first === '') {
    // suffix-range: the last N bytes; N = 0 selects nothing.
    const n = Number(last);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return { kind: 'none' }; // invalid per RFC 9110 §14.1.1: ignore the header
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/** `If-None-Match` uses the weak comparison (RFC 9110 §13.1.2): `W/` is ignored on both sides. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const ours = etag.replace(/^W\//, '');
  for (const tag of header.match(/(?:W\/)?"[^"]*"/g) ?? []) if (tag.replace(/^W\//, '') === ours) return true;
  return false;
}

/** `If-Range` needs a strong match of the ETag; a date (we send no Last-Modified) never matches. */
function ifRangeHolds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return true;
  const tag = header.trim();
  return !tag.startsWith('W/') && tag === etag;
}

export const IMMUTABLE = 'max-age=31536000, immutable';

/**
 * Photo ids are never reused and their bytes never change, hence `immutable`. A response to a
 * request carrying credentials is `private`: the caller's rule may have allowed this user only,
 * and `public` would let a shared cache hand it to anyone (RFC 9111 §3.5).
 */
export function cacheControl(req: RequestHead): string {
  return `${req.headers.authorization ? 'private' : 'public'}, ${IMMUTABLE}`;
}

export interface ServePhotoOptions {
  photo: PhotoRow;
  store: BlobStore;
  /** Serve a thumbnail of this size instead of the original. */
  thumb?: ThumbSize | null;
  /** Shared cache of thumbnails; one per store is made on first use when omitted. */
  thumbnails?: Thumbnailer;
}

const defaultThumbnailers = new WeakMap<BlobStore, Thumbnailer>();

export function thumbnailerFor(store: BlobStore): Thumbnailer {
  let t = defaultThumbnailers.get(store);
  if (!t) defaultThumbnailers.set(store, (t = new Thumbnailer(store)));
  return t;
}

/**
 * Writes the whole answer. Throws an ApiError (nothing written yet) when the bytes are missing;
 * resolves once the body is sent or the client has gone.
 */
export async function servePhoto(req: RequestHead, out: Sink, options: ServePhotoOptions): Promise<void> {
  const { photo, store, thumb } = options;
  const blob = thumb ? await fileBlob(await openThumb(options, thumb)) : await openOriginal(store, photo.id);
  let streaming = false;
  try {
    const { size } = blob;
    const etag = thumb ? `"${photo.id}-${thumb.width}x${thumb.height}-${size.toString(36)}"` : `"${photo.id}-${size.toString(36)}"`;
    const headers: Record<string, string | number> = { ETag: etag, 'Cache-Control': cacheControl(req), 'X-Content-Type-Options': 'nosniff' };
    // RFC 9110 §13.2.2: If-None-Match is evaluated before Range.
    if (noneMatch(req.headers['if-none-match'], etag)) {
      out.start(304, headers);
      out.end();
      return;
    }
    headers['Accept-Ranges'] = 'bytes';
    // Range is defined for GET only (RFC 9110 §14.2); HEAD answers what a plain GET would.
    const range = req.method === 'GET' && ifRangeHolds(req.headers['if-range'] as string | undefined, etag) ? parseRange(req.headers.range, size) : { kind: 'none' as const };
    if (range.kind === 'unsatisfiable') {
      const body = JSON.stringify({ error: { code: 'RANGE_NOT_SATISFIABLE', message: 'The requested range is not satisfiable' } });
      out.start(416, { ...headers, 'Content-Range': `bytes */${size}`, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      out.end(body);
      return;
    }
    const start = range.kind === 'range' ? range.start : 0;
    const end = range.kind === 'range' ? range.end : size - 1;
    headers['Content-Type'] = photo.mimeType;
    headers['Content-Length'] = end - start + 1;
    if (range.kind === 'range') headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
    if (req.method === 'HEAD' || size === 0) {
      out.start(range.kind === 'range' ? 206 : 200, headers);
      out.end();
      return;
    }
    // Open the bytes before the status goes out: a store that fails here still answers an error.
    const body = await blob.read(start, end);
    out.start(range.kind === 'range' ? 206 : 200, headers);
    streaming = true;
    await out.pipeFrom(body);
  } finally {
    if (!streaming) await blob.close();
  }
}

/** The original: from the store's own opener (object storage) or its file on this disk. */
async function openOriginal(store: BlobStore, id: string): Promise<OpenedBlob> {
  if (store.openBlob) {
    const blob = await store.openBlob(id);
    if (!blob) throw new ApiError('NOT_FOUND', 'No such photo');
    return blob;
  }
  await store.fetch?.(id);
  return await fileBlob(await openOrNotFound(store.path(id)));
}

/**
 * A file opened once: size and bytes come from the one descriptor, so a concurrent delete or
 * thumbnail eviction cannot make the headers and the body disagree. The stream closes it.
 */
async function fileBlob(handle: FileHandle): Promise<OpenedBlob> {
  try {
    const { size } = await handle.stat();
    return { size, read: (start, end) => Promise.resolve(handle.createReadStream({ start, end, autoClose: true })), close: () => handle.close() };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function openOrNotFound(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (err) {
    // A row without its bytes (a crash between blob removal and row removal): unknown photo.
    if (isMissing(err)) throw new ApiError('NOT_FOUND', 'No such photo');
    throw err;
  }
}

async function openThumb(options: ServePhotoOptions, size: ThumbSize): Promise<FileHandle> {
  const thumbnails = options.thumbnails ?? thumbnailerFor(options.store);
  // One retry: another size may have evicted this one between making and opening it.
  for (let attempt = 0; ; attempt++) {
    const path = await thumbnails.get(options.photo, size);
    try {
      return await open(path, 'r');
    } catch (err) {
      if (!isMissing(err) || attempt > 0) throw isMissing(err) ? new ApiError('NOT_FOUND', 'No such photo') : err;
    }
  }
}
