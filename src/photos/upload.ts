/**
 * Receiving `POST /img` (docs/reference/photos.md): `multipart/form-data` with one file part named `file`, or a
 * raw body with an `image/*` Content-Type. The bytes stream to a temp file through
 * `UploadInspector`, which enforces size, type and dimensions as they flow; nothing but a small
 * header is held in memory. Every failure removes the temp file before the promise rejects.
 *
 * On failure the request is unpiped and paused, never destroyed, so the caller can still answer
 * 413/415 on the socket; the HTTP layer then discards the rest of the body, bounded in time and
 * size (http/linger.ts), so the client is not reset before it reads the answer.
 */
import type { RequestStream } from '../core/sink.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type busboy from 'busboy';
import type sharp from 'sharp';
import { ApiError } from '../core/errors.js';
import { checkDimensions, tooLarge, unsupported, UploadInspector } from './inspect.js';
import { tempName } from './blob-store.js';
import { normalizeMime, type Dimensions, type ImageMime } from './sniff.js';
import { loadSharp } from './thumbs.js';

// Loaded on first use, not at start (issue #25: a start loads only what the first request needs).
let busboyModule: typeof busboy | undefined;
const loadBusboy = (): typeof busboy => (busboyModule ??= createRequire(import.meta.url)('busboy') as typeof busboy);

export interface UploadOptions {
  maxBytes: number;
  allowedMimeTypes: readonly string[];
  /** Must be on the same filesystem as the blob store, so commit is a rename. */
  tempDir: string;
}

export interface ReceivedUpload {
  tempPath: string;
  size: number;
  mimeType: ImageMime;
  width: number;
  height: number;
}

/** Room for the multipart framing and the (ignored, bounded) other fields around the file. */
export const MULTIPART_SLACK = 64 * 1024;
const MULTIPART_LIMITS = { fields: 16, fieldSize: 1024, fieldNameSize: 100, parts: 20, headerPairs: 16 };

function badRequest(message: string): ApiError {
  // The body may be only partly read: the HTTP layer drains the rest, bounded (http/linger.ts).
  return new ApiError('BAD_REQUEST', message);
}

function declaredLength(req: RequestStream): number | null {
  const raw = req.headers['content-length'];
  if (raw === undefined || !/^\d+$/.test(raw)) return null;
  return Number(raw);
}

/** Receives one photo into `tempDir`; rejects with 400 / 413 / 415 ApiErrors. */
export async function receiveUpload(req: RequestStream, options: UploadOptions): Promise<ReceivedUpload> {
  const contentType = req.headers['content-type'] ?? '';
  const kind = normalizeMime(contentType);
  const multipart = kind === 'multipart/form-data';
  if (!multipart && !kind.startsWith('image/')) {
    throw badRequest('Send multipart/form-data with one file part named "file", or a raw image/* body');
  }
  // Fail before reading anything when the client announces too much (docs/reference/photos.md: cut off early).
  const declared = declaredLength(req);
  if (declared !== null && declared > options.maxBytes + (multipart ? MULTIPART_SLACK : 0)) throw tooLarge();

  const tempPath = join(options.tempDir, tempName('up'));
  const allowed = options.allowedMimeTypes.map(normalizeMime);
  const received = await new Promise<{ inspector: UploadInspector }>((resolve, reject) => {
    const run = new UploadRun(req, tempPath, resolve, reject);
    if (multipart) run.multipart(options.maxBytes, allowed);
    else run.raw(options.maxBytes, allowed, contentType);
  });
  try {
    const { inspector } = received;
    const mimeType = inspector.mimeType!;
    const dimensions = inspector.dimensions ?? (await dimensionsFromFile(tempPath, mimeType));
    return { tempPath, size: inspector.size, mimeType, width: dimensions.width, height: dimensions.height };
  } catch (err) {
    await rm(tempPath, { force: true });
    throw err;
  }
}

/** One upload's plumbing: request → (busboy →) inspector → temp file, with a single exit. */
class UploadRun {
  readonly #req: RequestStream;
  readonly #tempPath: string;
  readonly #resolve: (v: { inspector: UploadInspector }) => void;
  readonly #reject: (err: unknown) => void;
  #settled = false;
  #out: WriteStream | null = null;
  #inspector: UploadInspector | null = null;
  #parser: busboy.Busboy | null = null;
  #onData: ((chunk: Buffer) => void) | null = null;

  constructor(req: RequestStream, tempPath: string, resolve: (v: { inspector: UploadInspector }) => void, reject: (err: unknown) => void) {
    this.#req = req;
    this.#tempPath = tempPath;
    this.#resolve = resolve;
    this.#reject = reject;
    req.on('error', () => this.fail(badRequest('The upload was interrupted')));
    req.on('close', () => {
      if (!req.complete) this.fail(badRequest('The upload was interrupted'));
    });
  }

  raw(maxBytes: number, allowed: readonly string[], declaredType: string): void {
    this.#sink(this.#req, maxBytes, allowed, declaredType, () => this.#finish());
  }

  multipart(maxBytes: number, allowed: readonly string[]): void {
    let parser: busboy.Busboy;
    try {
      // fileSize one past the limit: busboy signals `limit` on reaching it, i.e. on exceeding ours.
      parser = loadBusboy()({ headers: this.#req.headers as Parameters<typeof busboy>[0]['headers'], limits: { ...MULTIPART_LIMITS, files: 1, fileSize: maxBytes + 1 } });
    } catch {
      return this.fail(badRequest('The multipart body has no valid boundary'));
    }
    this.#parser = parser;
    let sawFile = false;
    let fileWritten = false;
    let parsed = false;
    const maybeFinish = () => {
      if (fileWritten && parsed) this.#finish();
    };
    parser.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
      // Busboy destroys an unfinished file stream with an error (truncated form, or our abort).
      stream.on('error', () => this.fail(badRequest('The multipart body is malformed')));
      if (name !== 'file' || sawFile) {
        stream.resume();
        return this.fail(badRequest('Send exactly one file part, named "file"'));
      }
      sawFile = true;
      stream.on('limit', () => this.fail(tooLarge()));
      this.#sink(stream, maxBytes, allowed, info.mimeType, () => {
        fileWritten = true;
        maybeFinish();
      });
    });
    parser.on('filesLimit', () => this.fail(badRequest('Send exactly one file part, named "file"')));
    parser.on('error', () => this.fail(badRequest('The multipart body is malformed')));
    parser.on('close', () => {
      if (!sawFile) return this.fail(badRequest('The multipart body has no file part named "file"'));
      parsed = true;
      maybeFinish();
    });
    // Bound the whole body too: parts after the file are skipped, but must not go on forever.
    let total = 0;
    const cap = maxBytes + MULTIPART_SLACK;
    this.#onData = (chunk) => {
      total += chunk.length;
      if (total > cap) this.fail(tooLarge());
    };
    this.#req.on('data', this.#onData);
    this.#req.pipe(parser);
  }

  /** Pipes `source` through a fresh inspector into the temp file; `done` once the file is closed. */
  #sink(source: Readable, maxBytes: number, allowed: readonly string[], declaredType: string, done: () => void): void {
    const inspector = new UploadInspector({ maxBytes, allowedMimeTypes: allowed, declaredType });
    const out = createWriteStream(this.#tempPath, { flags: 'wx', mode: 0o600 });
    this.#inspector = inspector;
    this.#out = out;
    inspector.on('error', (err) => this.fail(err));
    out.on('error', (err) => this.fail(err));
    // 'close' follows 'finish' once the descriptor is closed; only then is the file complete.
    out.on('close', () => {
      if (out.writableFinished) done();
    });
    source.pipe(inspector).pipe(out);
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#detach();
    this.#resolve({ inspector: this.#inspector! });
  }

  fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    const req = this.#req;
    // Stop reading now (docs/reference/photos.md), without destroying the socket the answer must go out on.
    req.unpipe();
    req.pause();
    this.#detach();
    // Busboy calls us from inside its parser loop; tearing it down synchronously would crash it.
    process.nextTick(() => {
      this.#parser?.destroy();
      this.#inspector?.destroy();
      const out = this.#out;
      const cleanup = () => {
        rm(this.#tempPath, { force: true }).then(
          () => this.#reject(err),
          () => this.#reject(err),
        );
      };
      if (out && !out.closed) {
        out.once('close', cleanup);
        out.destroy();
      } else {
        cleanup();
      }
    });
  }

  #detach(): void {
    if (this.#onData) this.#req.off('data', this.#onData);
    this.#onData = null;
  }
}

/** The header was past `HEAD_MAX` (e.g. a JPEG behind large EXIF/ICC segments): let libvips read it. */
async function dimensionsFromFile(path: string, mimeType: ImageMime): Promise<Dimensions> {
  let meta: sharp.Metadata;
  try {
    meta = await loadSharp()(path).metadata();
  } catch {
    throw unsupported('The image header is unreadable');
  }
  const format = meta.format === 'jpg' ? 'jpeg' : meta.format;
  if (`image/${format}` !== mimeType || !meta.width || !meta.height) throw unsupported('The image header is unreadable');
  const d = { width: meta.width, height: meta.height };
  checkDimensions(d);
  return d;
}
