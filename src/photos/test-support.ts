/** Helpers shared by this folder's tests: real images, a real HTTP server, a raw client. */
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { toApiError } from '../core/errors.js';

export type Format = 'png' | 'jpeg' | 'webp' | 'gif';

/** A real, decodable image with a gradient (so encoders cannot shrink it to nothing). */
export async function makeImage(format: Format, width: number, height: number, extra: { lossless?: boolean; alpha?: boolean } = {}): Promise<Buffer> {
  const channels = extra.alpha ? 4 : 3;
  const raw = Buffer.alloc(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      raw[i] = (x * 255) / Math.max(1, width - 1);
      raw[i + 1] = (y * 255) / Math.max(1, height - 1);
      raw[i + 2] = (x ^ y) & 0xff;
      if (channels === 4) raw[i + 3] = 128;
    }
  }
  const img = sharp(raw, { raw: { width, height, channels } });
  if (format === 'webp') return img.webp({ lossless: extra.lossless ?? false }).toBuffer();
  return img.toFormat(format).toBuffer();
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface TestServer {
  port: number;
  close(): Promise<void>;
}

/** Like the lead's server: thrown ApiErrors become the JSON error envelope with their headers. */
export async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      const e = toApiError(err);
      if (res.headersSent) return void res.destroy();
      const body = JSON.stringify(e.toJSON());
      for (const [k, v] of Object.entries(e.headers ?? {})) res.setHeader(k, v);
      res.writeHead(e.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function send(port: number, options: { method?: string; path?: string; headers?: Record<string, string | number>; body?: Buffer }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

export function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----tb${Math.random().toString(36).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(head + '\r\n'), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function errorCode(reply: Reply): string | undefined {
  try {
    return (JSON.parse(reply.body.toString('utf8')) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
