/**
 * A lean stream reader for the live benchmark: one raw TCP socket per stream, an HTTP/1.1 GET
 * asking for NDJSON, and just enough parsing (status line, chunked transfer coding, lines) to
 * timestamp each payload. Ten thousand node:http requests would cost the load client more CPU
 * and memory than the server it measures; this costs a socket and a few fields per stream.
 */
import { connect, type Socket } from 'node:net';

/** Decodes `Transfer-Encoding: chunked` (RFC 9112 §7.1) incrementally; extensions and trailers are ignored. */
class ChunkedDecoder {
  #state: 'size' | 'data' | 'crlf' | 'done' = 'size';
  #sizeLine = '';
  #remaining = 0;
  #crlf = 0;

  get done(): boolean {
    return this.#state === 'done';
  }

  push(buf: Buffer, out: (piece: Buffer) => void): void {
    let i = 0;
    while (i < buf.length && this.#state !== 'done') {
      if (this.#state === 'size') {
        const nl = buf.indexOf(10, i);
        if (nl < 0) {
          this.#sizeLine += buf.toString('latin1', i);
          return;
        }
        this.#sizeLine += buf.toString('latin1', i, nl);
        i = nl + 1;
        const size = parseInt(this.#sizeLine.split(';')[0]!.trim(), 16);
        this.#sizeLine = '';
        if (!Number.isFinite(size)) throw new Error('bad chunk size');
        if (size === 0) this.#state = 'done';
        else {
          this.#remaining = size;
          this.#state = 'data';
        }
      } else if (this.#state === 'data') {
        const n = Math.min(this.#remaining, buf.length - i);
        out(buf.subarray(i, i + n));
        this.#remaining -= n;
        i += n;
        if (this.#remaining === 0) {
          this.#state = 'crlf';
          this.#crlf = 2;
        }
      } else {
        const n = Math.min(this.#crlf, buf.length - i);
        this.#crlf -= n;
        i += n;
        if (this.#crlf === 0) this.#state = 'size';
      }
    }
  }
}

export interface WireOptions {
  port: number;
  /** Path and query, e.g. `/db/stream/list?body=...`. */
  path: string;
  /** Called for every payload line (heartbeats excluded) with the time it was read (performance.now()). */
  onPayload: (stream: WireStream, line: string, at: number) => void;
  host?: string;
}

export class WireStream {
  status = 0;
  payloads = 0;
  heartbeats = 0;
  closed = false;
  error: string | undefined;
  /** Free for the caller: the probe this stream is taking part in. */
  tag: unknown;
  readonly socket: Socket;
  #head: Buffer | null = Buffer.alloc(0);
  #chunked = false;
  #decoder = new ChunkedDecoder();
  #line: Buffer[] = [];
  #o: WireOptions;
  #body = '';

  constructor(o: WireOptions) {
    this.#o = o;
    const host = o.host ?? '127.0.0.1';
    this.socket = connect({ host, port: o.port, noDelay: true });
    this.socket.on('connect', () => {
      this.socket.write(`GET ${o.path} HTTP/1.1\r\nHost: ${host}:${o.port}\r\nAccept: application/x-ndjson\r\n\r\n`);
    });
    this.socket.on('data', (buf: Buffer) => this.#read(buf, performance.now()));
    this.socket.on('error', (err) => (this.error ??= err.message));
    this.socket.on('close', () => (this.closed = true));
  }

  /** The body of a refused stream (an error envelope), for diagnostics. */
  get body(): string {
    return this.#body;
  }

  close(): void {
    this.socket.destroy();
  }

  #read(buf: Buffer, at: number): void {
    if (this.#head !== null) {
      const all = Buffer.concat([this.#head, buf]);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) {
        this.#head = all;
        return;
      }
      const head = all.toString('latin1', 0, end);
      this.#head = null;
      this.status = Number(head.slice(9, 12));
      this.#chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
      buf = all.subarray(end + 4);
      if (this.status !== 200) {
        // Refused before streaming: tell the caller at once (an empty line), keep the body.
        this.#body += buf.toString('utf8');
        this.#o.onPayload(this, '', at);
        return;
      }
    }
    if (this.status !== 200) {
      this.#body += buf.toString('utf8');
      return;
    }
    if (this.#chunked) this.#decoder.push(buf, (piece) => this.#lines(piece, at));
    else this.#lines(buf, at);
  }

  #lines(piece: Buffer, at: number): void {
    let from = 0;
    for (let nl = piece.indexOf(10); nl >= 0; nl = piece.indexOf(10, from)) {
      this.#line.push(piece.subarray(from, nl));
      const line = this.#line.length === 1 ? this.#line[0]!.toString('utf8') : Buffer.concat(this.#line).toString('utf8');
      this.#line = [];
      from = nl + 1;
      if (line === '') this.heartbeats++;
      else {
        this.payloads++;
        this.#o.onPayload(this, line, at);
      }
    }
    if (from < piece.length) this.#line.push(Buffer.from(piece.subarray(from)));
  }
}
