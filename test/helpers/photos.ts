/**
 * The photo routes' test world (docs/reference/photos.md): a conformance server with an admin and two users
 * (owner, stranger), sample images, and the requests the /img tests send: raw and multipart
 * uploads, binary answers, and uploads written the way a client that does not wait would.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import sharp from 'sharp';
import { afterAll, beforeAll, expect } from 'vitest';
import { openS3 } from '../../src/s3/index.js';
import { errorCodeOf } from './expect.js';
import { bearer, parseJson, type Envelope, type TestServer } from './server.js';
import { signIn, signUp, startServerWithAdmin } from './users.js';

/** The conformance project's photo limit (`photos.maxBytes`). */
export const MAX_BYTES = 262_144;

export const image = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } });

export interface Caller {
  id: string;
  token: string;
}

export interface Photo {
  id: string;
  mimeType: string;
  size: number;
  ownerId: string | null;
  width: number;
  height: number;
  createdAt: string;
}

export interface PhotoWorld {
  readonly s: TestServer;
  readonly dataDir: string;
  readonly owner: Caller;
  readonly stranger: Caller;
  readonly admin: Caller;
  /** 64×48 */
  readonly png: Buffer;
  /** 90×60 */
  readonly jpeg: Buffer;
  /** A real PNG over MAX_BYTES. */
  readonly bigPng: Buffer;
}

const ADMIN = { email: 'root@example.com', password: 'admin-password-1' };

/** Call at the top of a test file: one server, its callers and the sample images. */
export function usePhotoWorld(): PhotoWorld {
  const w = {} as { -readonly [K in keyof PhotoWorld]: PhotoWorld[K] };
  const caller = (x: { id: string; accessToken: string }): Caller => ({ id: x.id, token: x.accessToken });
  beforeAll(async () => {
    ({ server: w.s, dataDir: w.dataDir } = await startServerWithAdmin(ADMIN));
    w.owner = caller(await signUp(w.s, 'owner@example.com'));
    w.stranger = caller(await signUp(w.s, 'stranger@example.com'));
    w.admin = caller(await signIn(w.s, 'admins', ADMIN.email, ADMIN.password));
    w.png = await image(64, 48).png().toBuffer();
    w.jpeg = await image(90, 60).jpeg().toBuffer();
    // Random pixels do not compress: 320×320×3 bytes of noise make a valid PNG of ~300 KB.
    w.bigPng = await sharp(randomBytes(320 * 320 * 3), { raw: { width: 320, height: 320, channels: 3 } })
      .png()
      .toBuffer();
    expect(w.bigPng.length).toBeGreaterThan(MAX_BYTES);
  }, 120_000);
  afterAll(async () => {
    await w.s?.dispose();
    if (w.dataDir) rmSync(w.dataDir, { recursive: true, force: true });
  });
  return w;
}

/** The requests of the /img tests, against the world's server. */
export function photoRequests(w: PhotoWorld) {
  const send = <T = Envelope>(method: string, path: string, opts: SendOptions = {}) => sendBinary<T>(w.s.base, method, path, opts);
  const uploadRaw = <T = Envelope>(bytes: Buffer, type: string, token?: string) => send<T>('POST', '/img', { body: bytes, type, headers: token ? bearer(token) : {} });
  const uploadForm = <T = Envelope>(bytes: Buffer, type: string, token?: string, filename?: string, name?: string) => {
    const form = multipart(bytes, type, filename, name);
    return send<T>('POST', '/img', { body: form.body, type: form.contentType, headers: token ? bearer(token) : {} });
  };
  return {
    send,
    uploadRaw,
    uploadForm,
    /** An upload that must succeed (the owner's PNG by default): its metadata. */
    async uploaded(bytes: Buffer = w.png, type = 'image/png', token = w.owner.token): Promise<Photo> {
      const r = await uploadRaw<{ data: Photo }>(bytes, type, token);
      expect(r.status, r.text).toBe(200);
      return r.json.data;
    },
    /** The whole of `bytes` with a Content-Length, through `streamUpload` (the server may answer early). */
    postEarly: (bytes: Buffer, contentType: string, headers?: Record<string, string>) =>
      streamUpload(w.s.base, { total: bytes.length, prefix: bytes, contentType, declareLength: true, ...(headers ? { headers } : {}) }),
    /** The stored originals: `<data>/photos/` without its `tmp` and `thumbs` folders, or the bucket's (S3 run). */
    storedNames: async () => (await storedObjects(w.s)).filter((n) => !n.startsWith('thumbs/')),
    /** The stored thumbnails of `id` (`W`x`H` names), on disk or in the bucket. */
    storedThumbs: async (id: string) => (await storedObjects(w.s)).filter((n) => n.startsWith(`thumbs/${id}/`)).map((n) => n.slice(`thumbs/${id}/`.length)),
    tempNames: () => readdirSync(join(w.dataDir, 'photos', 'tmp')),
  };
}

export const errorCode = (r: { json: unknown }) => errorCodeOf(r.json);

/**
 * Every stored name of a server's photo store, as `<id>` and `thumbs/<id>/<WxH>`: listed with the
 * S3 client when the server stores in a bucket, else read from `<data>/photos/`.
 */
export async function storedObjects(s: TestServer): Promise<string[]> {
  if (s.storageUrl?.startsWith('s3://')) {
    const bucket = openS3(s.storageUrl, { ...process.env, ...s.env });
    try {
      const names: string[] = [];
      for await (const o of bucket.list()) names.push(o.name);
      return names;
    } finally {
      bucket.destroy();
    }
  }
  const root = join(s.dataDir, 'photos');
  const names = readdirSync(root).filter((n) => n !== 'tmp' && n !== 'thumbs');
  for (const id of readdirSync(join(root, 'thumbs'))) for (const t of readdirSync(join(root, 'thumbs', id))) names.push(`thumbs/${id}/${t}`);
  return names;
}

interface SendOptions {
  body?: Buffer;
  type?: string;
  headers?: Record<string, string>;
}

/** A request with a binary body (or none), answered with the raw bytes. */
export async function sendBinary<T = Envelope>(base: string, method: string, path: string, opts: SendOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.type) headers['content-type'] = opts.type;
  const r = await fetch(base + path, { method, headers, ...(opts.body ? { body: new Uint8Array(opts.body) } : {}) });
  const bytes = Buffer.from(await r.arrayBuffer());
  return { status: r.status, headers: r.headers, bytes, json: parseJson<T>(bytes.toString('utf8')), text: bytes.toString('utf8') };
}

/** `multipart/form-data` with one part; `name` defaults to the field the upload route reads, `file`. */
export function multipart(bytes: Buffer, type: string, filename = 'photo.bin', name = 'file') {
  const boundary = `----tb${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
  return h;
}

interface Streamed {
  status: number;
  headers: Headers;
  json: Envelope;
  text: string;
  /** Body bytes the client had handed to the socket when the answer came. */
  sent: number;
}

export interface StreamOptions {
  /** Body bytes in all: `prefix`, then zero filler. */
  total: number;
  prefix: Buffer;
  contentType: string;
  headers?: Record<string, string>;
  /** Announce `total` in Content-Length; by default the body is chunked, so only counting can stop it. */
  declareLength?: boolean;
}

/**
 * POSTs a body to /img the way a client that does not wait for the answer would. One 64 KiB
 * write at a time, each after the previous one was flushed and the event loop has polled the
 * socket, so an answer the server sends early is read before the next write; writing stops as
 * soon as it arrives. Socket errors after the answer (the server closing the connection on an
 * upload it cut off) are expected and ignored. fetch is not used: it reports the close instead of
 * an answer that came before it.
 */
export function streamUpload(base: string, opts: StreamOptions): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(`${base}/img`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': opts.contentType,
        ...(opts.declareLength ? { 'content-length': String(opts.total) } : { 'transfer-encoding': 'chunked' }),
        ...opts.headers,
      },
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: toHeaders(res.headers), json: parseJson<Envelope>(text), text, sent });
      });
      res.on('error', (err) => reject(err));
    });
    req.on('error', (err) => {
      // The server reads and discards the rest of a refused body before it closes (http/linger.ts),
      // so a failure before the answer is a server bug, not a race to retry.
      if (!answered) reject(new Error(`the connection failed before any answer, after ${sent} bytes: ${err.message}`));
    });
    const CHUNK = 64 * 1024;
    const filler = Buffer.alloc(CHUNK);
    const flushed = (piece: Buffer) =>
      new Promise<void>((r) => {
        const done = () => {
          req.off('response', done);
          req.off('close', done);
          r();
        };
        req.write(piece, done);
        req.once('response', done);
        req.once('close', done);
      });
    const pump = async () => {
      while (!answered && !req.destroyed && sent < opts.total) {
        const piece = sent < opts.prefix.length ? opts.prefix.subarray(sent, sent + CHUNK) : filler;
        const take = piece.subarray(0, Math.min(piece.length, opts.total - sent));
        sent += take.length;
        await flushed(take);
        await tick();
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump().catch(reject);
  });
}
