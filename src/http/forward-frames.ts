/**
 * The framed protocol between the workers of `serve --workers` and their primary, on a private
 * Unix socket (docs/scaling.md "The forward protocol"): one connection per worker, every
 * forwarded exchange a numbered stream of frames on it. A frame is
 *
 *   u32 size (of what follows) | u8 type | u32 exchange id | u32 meta size | meta (JSON) | body
 *
 * worker → primary: REQUEST (meta: method, url, headers; body: the whole request body), CANCEL
 * (the client went away); primary → worker: ANSWER (meta: status, headers, whether it ends; body:
 * the answer's first bytes, usually all of them), DATA, END, RESET (the primary cut the answer).
 *
 * Why frames and not HTTP per request (measured in docs/scaling.md): with one kept-alive HTTP
 * connection per request in flight, each answer was one `writev` and one wake-up of the other
 * process, on each side, and the worker ran node's whole HTTP client (ClientRequest, agent,
 * response parser, two pipes). Here what one loop turn produced goes out in one write
 * (`FrameWriter`): a group-commit batch of 30 answers crosses the socket in one system call.
 */
import type { Socket } from 'node:net';

export const REQUEST = 1;
export const CANCEL = 2;
export const ANSWER = 3;
export const DATA = 4;
export const END = 5;
export const RESET = 6;

const HEAD = 13;
const EMPTY = Buffer.alloc(0);
/** A frame bigger than this is a broken peer, not a request (bodies on this path are ≤ 64 KiB; answers are bounded by maxResponseBytes). */
const MAX_FRAME = 1024 * 1024 * 1024;

export interface Frame {
  readonly type: number;
  readonly id: number;
  readonly meta: string;
  readonly body: Buffer;
}

/**
 * Queues frames and writes what one loop turn queued in one go (corked: one `writev`), at
 * `setImmediate`, after the turn's I/O callbacks and the microtasks they ran (a group commit's
 * answers are written from microtasks).
 */
export class FrameWriter {
  #queued: Buffer[] = [];
  #scheduled = false;
  readonly #flush = () => {
    this.#scheduled = false;
    const q = this.#queued;
    this.#queued = [];
    if (this.socket.destroyed) return;
    if (q.length === 1) return void this.socket.write(q[0]!);
    this.socket.cork();
    for (const b of q) this.socket.write(b);
    this.socket.uncork();
  };

  constructor(readonly socket: Socket) {}

  send(type: number, id: number, meta = '', body: Buffer | string = EMPTY): void {
    const metaBytes = meta.length === 0 ? 0 : Buffer.byteLength(meta);
    const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    const frame = Buffer.allocUnsafe(HEAD + metaBytes + bodyBytes);
    frame.writeUInt32BE(HEAD - 4 + metaBytes + bodyBytes, 0);
    frame.writeUInt8(type, 4);
    frame.writeUInt32BE(id, 5);
    frame.writeUInt32BE(metaBytes, 9);
    if (metaBytes) frame.write(meta, HEAD, metaBytes, 'utf8');
    if (bodyBytes) {
      if (typeof body === 'string') frame.write(body, HEAD + metaBytes, bodyBytes, 'utf8');
      else body.copy(frame, HEAD + metaBytes);
    }
    this.#queued.push(frame);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }
}

/** Cuts a byte stream into frames; throws on a frame no peer of ours sends. */
export class FrameReader {
  #rest: Buffer = EMPTY;

  /** The frames completed by `chunk`, in order. */
  *push(chunk: Buffer): Generator<Frame> {
    let buf = this.#rest.length === 0 ? chunk : Buffer.concat([this.#rest, chunk]);
    let at = 0;
    while (buf.length - at >= HEAD) {
      const size = buf.readUInt32BE(at);
      if (size < HEAD - 4 || size > MAX_FRAME) throw new Error(`bad forward frame (${size} bytes)`);
      if (buf.length - at < size + 4) break;
      const metaBytes = buf.readUInt32BE(at + 9);
      if (metaBytes > size - (HEAD - 4)) throw new Error('bad forward frame (meta past its end)');
      const type = buf.readUInt8(at + 4);
      const id = buf.readUInt32BE(at + 5);
      const meta = metaBytes ? buf.toString('utf8', at + HEAD, at + HEAD + metaBytes) : '';
      const body = buf.subarray(at + HEAD + metaBytes, at + 4 + size);
      at += 4 + size;
      yield { type, id, meta, body };
    }
    buf = at === buf.length ? EMPTY : buf.subarray(at);
    this.#rest = buf;
  }
}
