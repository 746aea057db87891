/**
 * The pass-through stream every uploaded byte goes through on its way to the temp file. It
 * enforces docs/reference/photos.md's limits while the bytes flow, so nothing is buffered beyond a small header:
 * - size: fails the moment the count passes `maxBytes` (413);
 * - type: decided from the first bytes' signature, checked against the allow-list and against
 *   the declared type (415);
 * - decompression bombs: the declared dimensions are checked as soon as the header is seen (415).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { ApiError } from '../core/errors.js';
import { normalizeMime, readDimensions, sniffMime, SIGNATURE_BYTES, type Dimensions, type ImageMime } from './sniff.js';

/** Bomb guard: at most 100 megapixels, and no side longer than 30000 pixels. */
export const MAX_PIXELS = 100_000_000;
export const MAX_SIDE = 30_000;
/**
 * Bytes kept to find the dimensions. A JPEG's frame header may sit behind EXIF / ICC segments;
 * past this much the caller falls back to reading the header from the stored file.
 */
export const HEAD_MAX = 256 * 1024;

/** Declared types that say nothing about the bytes: multipart's defaults (RFC 7578 §4.4). */
const UNDECLARED = new Set(['', 'application/octet-stream', 'text/plain']);

export interface InspectLimits {
  maxBytes: number;
  /** Normalized (see `normalizeMime`). */
  allowedMimeTypes: readonly string[];
  /** The part's or the request's Content-Type, if any. */
  declaredType?: string | undefined;
}

export function tooLarge(): ApiError {
  // The rest of the body is never stored: the HTTP layer discards it, bounded (http/linger.ts).
  return new ApiError('PAYLOAD_TOO_LARGE', `The photo is larger than the limit`);
}

export function unsupported(message: string): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', message);
}

/** Throws a 415 when an image's declared size could exhaust memory once decoded. */
export function checkDimensions(d: Dimensions): void {
  if (d.width > MAX_SIDE || d.height > MAX_SIDE || d.width * d.height > MAX_PIXELS) {
    throw unsupported(`The image dimensions are too large (at most ${MAX_SIDE} pixels a side and ${MAX_PIXELS / 1_000_000} megapixels)`);
  }
}

/** Decides the type from the signature and checks it against the allow-list and the declared type. */
export function decideType(head: Uint8Array, limits: InspectLimits): ImageMime {
  const mime = sniffMime(head);
  if (!mime || !limits.allowedMimeTypes.includes(mime)) {
    throw unsupported(`The photo must be one of: ${limits.allowedMimeTypes.join(', ')}`);
  }
  const declared = normalizeMime(limits.declaredType ?? '');
  if (!UNDECLARED.has(declared) && declared !== mime) {
    throw unsupported(`The declared type ${declared} does not match the photo's bytes`);
  }
  return mime;
}

export class UploadInspector extends Transform {
  readonly #limits: InspectLimits;
  #size = 0;
  /** The first bytes, copied into one growing buffer (never more than HEAD_MAX). */
  #head = Buffer.alloc(0);
  #headLength = 0;
  /** Header parsing is retried only when the head has doubled, so a trickle of 1-byte chunks stays linear. */
  #nextAttempt = SIGNATURE_BYTES;
  #mime: ImageMime | null = null;
  #dimensions: Dimensions | null = null;

  constructor(limits: InspectLimits) {
    super();
    this.#limits = limits;
  }

  get size(): number {
    return this.#size;
  }
  get mimeType(): ImageMime | null {
    return this.#mime;
  }
  /** Null when the header did not fit in `HEAD_MAX` bytes: read it from the stored file then. */
  get dimensions(): Dimensions | null {
    return this.#dimensions;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#size += chunk.length;
    if (this.#size > this.#limits.maxBytes) return callback(tooLarge());
    try {
      if (this.#dimensions === null && this.#headLength < HEAD_MAX) {
        this.#append(chunk);
        if (this.#headLength >= this.#nextAttempt) this.#examine(false);
      }
    } catch (err) {
      return callback(err as Error);
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (this.#size === 0) throw new ApiError('BAD_REQUEST', 'The photo is empty');
      if (this.#dimensions === null) this.#examine(true);
      // The whole file fit in the head and still no readable header: not a usable image.
      if (this.#dimensions === null && this.#headLength < HEAD_MAX) throw unsupported('The image header is unreadable');
    } catch (err) {
      return callback(err as Error);
    }
    this.#head = Buffer.alloc(0);
    callback();
  }

  #append(chunk: Buffer): void {
    const take = Math.min(chunk.length, HEAD_MAX - this.#headLength);
    const need = this.#headLength + take;
    if (need > this.#head.length) {
      const grown = Buffer.allocUnsafe(Math.min(HEAD_MAX, Math.max(need, this.#head.length * 2, 4096)));
      this.#head.copy(grown, 0, 0, this.#headLength);
      this.#head = grown;
    }
    chunk.copy(this.#head, this.#headLength, 0, take);
    this.#headLength = need;
  }

  #examine(atEnd: boolean): void {
    const head = this.#head.subarray(0, this.#headLength);
    if (this.#mime === null) {
      if (this.#headLength < SIGNATURE_BYTES && !atEnd) return;
      this.#mime = decideType(head, this.#limits);
    }
    const d = readDimensions(head, this.#mime);
    if (d) {
      checkDimensions(d);
      this.#dimensions = d;
      this.#head = Buffer.alloc(0); // no longer needed
    } else {
      this.#nextAttempt = Math.min(HEAD_MAX, this.#headLength * 2);
    }
  }
}
