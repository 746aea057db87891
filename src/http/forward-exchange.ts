/**
 * The primary's end of the framed forward protocol (./forward-frames.ts, docs/scaling.md): each
 * REQUEST frame becomes a request/response pair that the server's one `handle` runs exactly as
 * a socket's (lifecycle, rules, hooks in the writer's transaction, metrics, log), without an
 * HTTP parser or an HTTP answer to serialize: the answer's status, headers and body go back as
 * one ANSWER frame (or ANSWER, DATA…, END when it is written in parts).
 *
 * The stand-ins carry what the server, the lifecycle and the answer writers use of
 * node:http's `IncomingMessage` and `ServerResponse` (headers, the body as a stream, status and
 * headers, write/end/destroy, 'finish'/'close'); the body has already arrived whole (the worker
 * sends this way only bodies of at most 64 KiB), so it is `complete` from the start.
 */
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { WHOLE_BODY } from './body.js';
import { ANSWER, CANCEL, DATA, END, FrameReader, FrameWriter, REQUEST, RESET } from './forward-frames.js';

/** What a REQUEST frame's meta holds. */
export interface RequestMeta {
  /** Method, URL (path and query), headers (the client's, end to end, plus X-Forwarded-For and X-Request-Id). */
  readonly m: string;
  readonly u: string;
  readonly h: IncomingHttpHeaders;
}

/** What an ANSWER frame's meta holds: status, headers, and whether the body in the frame is all of it. */
export interface AnswerMeta {
  readonly s: number;
  readonly h: Record<string, OutgoingHttpHeader>;
  readonly e: boolean;
}

/** The request's connection, as far as the lifecycle looks at it: gone when the worker's client left. */
class Peer extends EventEmitter {
  destroyed = false;
  readonly remoteAddress = '';
  constructor(readonly cut: () => void) {
    super();
  }
  setNoDelay(): this {
    return this;
  }
  /** The lifecycle cuts the connection (a stalled large answer): the worker cuts its client's. */
  destroy(): this {
    this.cut();
    return this;
  }
}

/**
 * The body is a stream only for the routes that read one (raw bodies: uploads, logout), pushed on
 * their first read; a JSON route's body is taken whole (WHOLE_BODY, ./body.ts), with no stream
 * event or promise on the primary, the one process every forwarded write passes through.
 */
class ForwardedRequest extends Readable {
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly httpVersion = '1.1';
  readonly complete = true;
  readonly [WHOLE_BODY]: Buffer;
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    body: Buffer,
    readonly socket: Peer,
  ) {
    super();
    this[WHOLE_BODY] = body;
  }
  override _read(): void {
    const body = this[WHOLE_BODY];
    if (body.length > 0) this.push(body);
    this.push(null);
  }
}

class ForwardedResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  readonly writableLength = 0;
  #headers: Record<string, OutgoingHttpHeader> = {};
  /** Whether the ANSWER frame (status and headers) left. */
  #started = false;

  constructor(
    readonly id: number,
    readonly out: FrameWriter,
  ) {
    super();
  }

  get finished(): boolean {
    return this.writableEnded;
  }
  get writable(): boolean {
    return !this.writableEnded && !this.destroyed;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    if (this.headersSent) throw Object.assign(new Error('Cannot set headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    this.#headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.#headers[name.toLowerCase()];
  }
  getHeaders(): Record<string, OutgoingHttpHeader> {
    return { ...this.#headers };
  }
  getHeaderNames(): string[] {
    return Object.keys(this.#headers);
  }
  hasHeader(name: string): boolean {
    return name.toLowerCase() in this.#headers;
  }
  appendHeader(name: string, value: string | readonly string[]): this {
    const key = name.toLowerCase();
    const had = this.#headers[key];
    const add = typeof value === 'string' ? [value] : [...value];
    this.#headers[key] = had === undefined ? (add.length === 1 ? add[0]! : add) : [...(Array.isArray(had) ? had : [String(had)]), ...add];
    return this;
  }
  /** Frames are already coalesced per loop turn (FrameWriter): nothing to cork. */
  cork(): void {}
  uncork(): void {}
  removeHeader(name: string): void {
    if (this.headersSent) throw Object.assign(new Error('Cannot remove headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    delete this.#headers[name.toLowerCase()];
  }

  writeHead(status: number, reason?: string | Record<string, OutgoingHttpHeader>, headers?: Record<string, OutgoingHttpHeader>): this {
    if (this.headersSent) throw Object.assign(new Error('Cannot write headers after they are sent to the client'), { code: 'ERR_HTTP_HEADERS_SENT' });
    const h = typeof reason === 'string' ? headers : reason;
    if (typeof reason === 'string') this.statusMessage = reason;
    if (h) for (const k in h) this.#headers[k.toLowerCase()] = h[k]!;
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
    if (!this.#started) this.#start('', false);
  }

  /** Answers stream through without waiting for the worker: an answer here is bounded (maxResponseBytes). */
  write(chunk: string | Buffer | Uint8Array, encoding?: BufferEncoding | (() => void), cb?: () => void): boolean {
    if (this.writableEnded || this.destroyed) return false;
    if (!this.headersSent) this.writeHead(this.statusCode);
    const body = toBody(chunk, typeof encoding === 'string' ? encoding : undefined);
    if (!this.#started) this.#start(body, false);
    else if (body.length > 0) this.out.send(DATA, this.id, '', body);
    const done = typeof encoding === 'function' ? encoding : cb;
    if (done) process.nextTick(done);
    return true;
  }

  end(chunk?: string | Buffer | Uint8Array | (() => void), encoding?: BufferEncoding | (() => void), cb?: () => void): this {
    const done = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
    if (this.writableEnded || this.destroyed) return this;
    if (!this.headersSent) this.writeHead(this.statusCode);
    const body = chunk === undefined || typeof chunk === 'function' ? '' : toBody(chunk, typeof encoding === 'string' ? encoding : undefined);
    if (!this.#started) this.#start(body, true);
    else this.out.send(END, this.id, '', body);
    this.writableEnded = true;
    this.writableFinished = true; // handed to the worker's connection: what node:http calls finished
    process.nextTick(() => {
      this.emit('finish');
      this.emit('close');
      done?.();
    });
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    if (!this.writableEnded) {
      this.out.send(RESET, this.id);
      process.nextTick(() => this.emit('close'));
    }
    return this;
  }

  /** The stall cut of large answers is the worker's (it holds the client's socket); nothing to watch here. */
  setTimeout(): this {
    return this;
  }

  /** The worker's client left (CANCEL), or the worker's connection closed: no answer is wanted. */
  abandon(): void {
    if (this.destroyed || this.writableEnded) return;
    this.destroyed = true;
    process.nextTick(() => this.emit('close'));
  }

  #start(body: string | Buffer, ends: boolean): void {
    this.#started = true;
    const meta: AnswerMeta = { s: this.statusCode, h: this.#headers, e: ends };
    this.out.send(ANSWER, this.id, JSON.stringify(meta), body);
  }
}

function toBody(chunk: string | Buffer | Uint8Array, encoding: BufferEncoding | undefined): string | Buffer {
  if (typeof chunk === 'string') return encoding && encoding !== 'utf8' && encoding !== 'utf-8' ? Buffer.from(chunk, encoding) : chunk;
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

export type ForwardedHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The server of the private frames socket; `closeAll` cuts what is still connected (a forced stop). */
export interface FrameServer {
  readonly server: Server;
  closeAll(): void;
}

export function createFrameServer(handler: ForwardedHandler, onError: (err: unknown) => void): FrameServer {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    const out = new FrameWriter(socket);
    const reader = new FrameReader();
    const open = new Map<number, { req: ForwardedRequest; res: ForwardedResponse }>();
    const leave = (id: number) => {
      const x = open.get(id);
      if (!x) return;
      open.delete(id);
      x.req.socket.destroyed = true;
      x.res.abandon();
      x.req.socket.emit('close');
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const f of reader.push(chunk)) {
          if (f.type === REQUEST) {
            const meta = JSON.parse(f.meta) as RequestMeta;
            const id = f.id;
            const res = new ForwardedResponse(id, out);
            const req = new ForwardedRequest(meta.m, meta.u, meta.h, f.body, new Peer(() => res.destroy()));
            open.set(id, { req, res });
            res.once('close', () => open.get(id)?.res === res && open.delete(id));
            handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
          } else if (f.type === CANCEL) leave(f.id);
        }
      } catch (err) {
        // Only a worker of this server writes here: a broken frame is a bug, and the connection is unusable.
        onError(err);
        socket.destroy();
      }
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.once('close', () => {
      sockets.delete(socket);
      for (const id of [...open.keys()]) leave(id);
    });
  });
  return {
    server,
    closeAll: () => {
      for (const s of sockets) s.destroy();
    },
  };
}
