/**
 * An answer sent before the request's body was read (a 413 on a `Content-Length` past the limit,
 * or on a chunked body counted past it) leaves the client's kept-alive connection usable: the
 * next request on the same socket is answered (docs/reference/conventions.md, docs/scaling.md).
 * Through a worker of `--workers 2` such a body is over 64 KiB, so it crosses to the primary over
 * HTTP, where the primary answers before reading it all; until issue #24's fix the worker's
 * connection then stalled until its keep-alive timeout and was reset. The same on one process.
 *
 * A raw socket, so "the same connection" is certain: the second answer arrives on it, or the
 * socket closes first (the stall ended by the keep-alive timeout) and the test fails.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START_TIMEOUT_MS, startServer, type TestServer } from '../helpers/server.js';

/** Complete answers read off one socket, in order (every answer here has a Content-Length). */
class RawConnection {
  readonly socket: Socket;
  #buf = Buffer.alloc(0);
  #answers: { status: number; headers: string; body: string }[] = [];
  #closed = false;
  #wake: () => void = () => undefined;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      this.#parse();
      this.#wake();
    });
    this.socket.on('error', () => undefined); // 'close' follows
    this.socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
  }

  #parse(): void {
    for (;;) {
      const end = this.#buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = this.#buf.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
      if (this.#buf.length < end + 4 + length) return;
      const body = this.#buf.subarray(end + 4, end + 4 + length).toString('utf8');
      this.#buf = this.#buf.subarray(end + 4 + length);
      this.#answers.push({ status: Number(headers.split(' ')[1]), headers, body });
    }
  }

  /** The n-th answer (1-based) on this socket; throws if the socket closes before it. */
  async answer(n: number): Promise<{ status: number; headers: string; body: string }> {
    while (this.#answers.length < n) {
      if (this.#closed) throw new Error(`the connection closed before answer ${n} (${this.#answers.length} received)`);
      await new Promise<void>((r) => (this.#wake = r));
    }
    return this.#answers[n - 1]!;
  }

  /** Writes `data`, waiting while the socket pushes back; false once the socket is gone. */
  async send(data: Buffer | string): Promise<boolean> {
    if (this.socket.destroyed) return false;
    if (!this.socket.write(data)) await new Promise((r) => (this.socket.once('drain', r), this.socket.once('close', r)));
    return !this.socket.destroyed;
  }
}

const MIB = 1024 * 1024;
const json = (bytes: number) => Buffer.from(JSON.stringify({ table: 'events', object: { title: 'x'.repeat(bytes) } }));

/** Each: the head and the body of a request answered before its body is read, whole. */
const EARLY: { name: string; head: (body: Buffer) => string; body: () => Buffer; chunked?: boolean }[] = [
  {
    name: 'a JSON write whose Content-Length passes maxBodyBytes (1 MiB)',
    head: (b) => `POST /db HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n`,
    body: () => json(MIB + 1),
  },
  {
    name: 'a chunked JSON write counted past maxBodyBytes',
    head: () => `POST /db HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    body: () => json(2 * MIB),
    chunked: true,
  },
  {
    name: 'a photo whose Content-Length passes the project maxBytes (262144)',
    head: (b) => `POST /img HTTP/1.1\r\nHost: t\r\nContent-Type: image/png\r\nContent-Length: ${b.length}\r\n\r\n`,
    body: () => Buffer.alloc(400 * 1024),
  },
];

async function sendWhole(c: RawConnection, head: string, body: Buffer, chunked: boolean): Promise<void> {
  await c.send(head);
  const step = 64 * 1024;
  for (let at = 0; at < body.length; at += step) {
    const piece = body.subarray(at, at + step);
    if (!(await c.send(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece))) return;
  }
  if (chunked) await c.send('0\r\n\r\n');
}

for (const workers of [1, 2]) {
  describe(`--workers ${workers}`, () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startServer({ workers });
    }, START_TIMEOUT_MS);
    afterAll(() => s?.dispose());

    for (const x of EARLY) {
      it(`${x.name}: 413, then the next request on the same connection is answered`, async () => {
        const c = new RawConnection(s.port);
        try {
          await new Promise((r) => c.socket.once('connect', r));
          // The whole body is sent, as a client that does not read before it finished writing does.
          const body = x.body();
          await sendWhole(c, x.head(body), body, x.chunked === true);
          const first = await c.answer(1);
          expect(first.status, first.body).toBe(413);
          expect(JSON.parse(first.body).error.code).toBe('PAYLOAD_TOO_LARGE');
          expect(first.headers).not.toMatch(/\r\nconnection: *close/i);
          await c.send('GET /health HTTP/1.1\r\nHost: t\r\n\r\n');
          const second = await c.answer(2);
          expect(second.status).toBe(200);
          expect(JSON.parse(second.body)).toEqual({ data: { status: 'ok' } });
        } finally {
          c.socket.destroy();
        }
      }, 30_000);
    }
  });
}
