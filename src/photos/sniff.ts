/**
 * Image type and size from the first bytes (docs/reference/photos.md: the type is decided from the bytes'
 * signature, never from a file name or a declared Content-Type). Every read is bounds-checked:
 * hostile or truncated input yields `null`, never an exception or an out-of-range read.
 */

export type ImageMime = 'image/jpeg' | 'image/png' | 'image/webp' | 'image/gif';

export const IMAGE_MIME_TYPES: readonly ImageMime[] = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];

/** Bytes needed to decide the signature of every supported type (WebP's RIFF....WEBP is 12). */
export const SIGNATURE_BYTES = 12;

export interface Dimensions {
  width: number;
  height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(buf: Uint8Array, bytes: readonly number[], at = 0): boolean {
  if (buf.length < at + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (buf[at + i] !== bytes[i]) return false;
  return true;
}

function ascii(buf: Uint8Array, at: number, text: string): boolean {
  if (buf.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (buf[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
// `>>> 0` keeps the top bit from turning the value negative.
const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

/** The image type the signature announces, or null for anything else (or too few bytes). */
export function sniffMime(buf: Uint8Array): ImageMime | null {
  // JPEG: SOI followed by the 0xFF of the first marker.
  if (startsWith(buf, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(buf, PNG_SIGNATURE)) return 'image/png';
  if (ascii(buf, 0, 'GIF87a') || ascii(buf, 0, 'GIF89a')) return 'image/gif';
  if (ascii(buf, 0, 'RIFF') && ascii(buf, 8, 'WEBP')) return 'image/webp';
  return null;
}

function dims(width: number, height: number): Dimensions | null {
  return width > 0 && height > 0 ? { width, height } : null;
}

/** PNG: the first chunk must be IHDR (length 13), holding width and height big-endian. */
function pngDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 24 || u32be(b, 8) !== 13 || !ascii(b, 12, 'IHDR')) return null;
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  // The PNG spec caps both at 2^31 - 1.
  if (width > 0x7fffffff || height > 0x7fffffff) return null;
  return dims(width, height);
}

/** GIF: the logical screen descriptor right after the 6-byte signature. */
function gifDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 10) return null;
  return dims(u16le(b, 6), u16le(b, 8));
}

/**
 * JPEG: walk the marker segments until a start-of-frame. SOF0–SOF15 are 0xC0–0xCF except
 * 0xC4 (DHT), 0xC8 (JPG, reserved) and 0xCC (DAC). Every length is checked against the buffer.
 */
function jpegDimensions(b: Uint8Array): Dimensions | null {
  let at = 2; // after SOI
  while (at < b.length) {
    if (b[at] !== 0xff) return null; // segments must start with a marker
    // Any number of 0xFF fill bytes may precede a marker code (ITU T.81 §B.1.1.2).
    while (at < b.length && b[at] === 0xff) at++;
    if (at >= b.length) return null;
    const marker = b[at]!;
    at++;
    // Stand-alone markers carry no length: TEM and RST0–RST7.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    // EOI or SOS before any frame header: no dimensions to be had.
    if (marker === 0xd9 || marker === 0xda || marker === 0x00) return null;
    if (at + 2 > b.length) return null;
    const length = u16be(b, at);
    if (length < 2) return null;
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      // length(2) precision(1) height(2) width(2)
      if (length < 7 || at + 7 > b.length) return null;
      return dims(u16be(b, at + 5), u16be(b, at + 3));
    }
    at += length;
  }
  return null;
}

/** WebP: the first chunk after RIFF....WEBP is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpDimensions(b: Uint8Array): Dimensions | null {
  if (b.length < 30) return null;
  if (ascii(b, 12, 'VP8 ')) {
    // Chunk data at 20: 3-byte frame tag, start code 9d 01 2a, then 14-bit width and height.
    if (!startsWith(b, [0x9d, 0x01, 0x2a], 23)) return null;
    return dims(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
  }
  if (ascii(b, 12, 'VP8L')) {
    // Signature 0x2f, then width-1 and height-1 as consecutive 14-bit little-endian fields.
    if (b[20] !== 0x2f) return null;
    const bits = (b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24)) >>> 0;
    return dims((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(b, 12, 'VP8X')) {
    // Flags(1) reserved(3), then canvas width-1 and height-1 as 24-bit little-endian.
    return dims(u24le(b, 24) + 1, u24le(b, 27) + 1);
  }
  return null;
}

/** Width and height from the header of an image of type `mime`; null when not (yet) readable. */
export function readDimensions(buf: Uint8Array, mime: ImageMime): Dimensions | null {
  switch (mime) {
    case 'image/png':
      return pngDimensions(buf);
    case 'image/gif':
      return gifDimensions(buf);
    case 'image/jpeg':
      return jpegDimensions(buf);
    case 'image/webp':
      return webpDimensions(buf);
  }
}

/** Signature and dimensions together; dimensions are null when the header is not in `buf`. */
export function sniffImage(buf: Uint8Array): { mimeType: ImageMime; dimensions: Dimensions | null } | null {
  const mimeType = sniffMime(buf);
  return mimeType && { mimeType, dimensions: readDimensions(buf, mimeType) };
}

const ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'image/x-png': 'image/png' };

/** `Image/JPG; q=1` → `image/jpeg`: lowercased, parameters dropped, common aliases folded. */
export function normalizeMime(value: string): string {
  const bare = value.split(';', 1)[0]!.trim().toLowerCase();
  return ALIASES[bare] ?? bare;
}
