/**
 * The small-body reader of raw routes (logout, the OAuth form post), behind the server's error path
 * as server.ts runs it. A body past the limit is answered 413 and the rest drained, so the
 * keep-alive connection stays usable: the seeded fuzz once saw a logout with a 200 KB body leave its
 * connection half-read, and the next request the client sent on it was reset (docs/reference/conventions.md).
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiError } from '../core/errors.js';
import { bodyPending, drainRest } from './linger.js';
import { sendData, sendError } from './respond.js';
import { readSmallBody } from './small-body.js';

const MAX = 1024;
let server: Server;

beforeAll(async () => {
  server = createServer((req, res) => {
    readSmallBody(req, MAX).then(
      (body) => sendData(res, { bytes: body.length }),
      (err) => sendError(res, toApiError(err), bodyPending(req) ? drainRest(req) : undefined),
    );
  });
  // Short, so a connection left half-read shows as a reset within the test rather than a hang.
  server.keepAliveTimeout = 500;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** One keep-alive connection, answers read one by one (each is complete by its Content-Length). */
function keepAliveClient() {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  let received = '';
  const errors: string[] = [];
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', (err) => errors.push(err.message));
  const post = (body: Buffer) => socket.write(Buffer.concat([Buffer.from(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`), body]));
  /** The next whole answer, or null once the server closed or reset the connection. */
  const next = async (): Promise<{ status: number; body: { data?: unknown; error?: { code: string } } } | null> => {
    for (;;) {
      const head = received.indexOf('\r\n\r\n');
      const length = head < 0 ? -1 : Number(/content-length: (\d+)/i.exec(received.slice(0, head))?.[1]);
      if (length >= 0 && received.length >= head + 4 + length) {
        const status = Number(received.slice(9, 12));
        const body = JSON.parse(received.slice(head + 4, head + 4 + length));
        received = received.slice(head + 4 + length);
        return { status, body };
      }
      if (socket.destroyed || socket.readableEnded) return null;
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return { socket, post, next, errors };
}

describe('readSmallBody', () => {
  it('reads a body within the limit whole, and an empty one as empty', async () => {
    const c = keepAliveClient();
    c.post(Buffer.alloc(MAX, 'a'));
    expect(await c.next()).toEqual({ status: 200, body: { data: { bytes: MAX } } });
    c.post(Buffer.alloc(0));
    expect(await c.next()).toEqual({ status: 200, body: { data: { bytes: 0 } } });
    c.socket.destroy();
  });

  it('answers 413 past the limit, drains the rest, and the connection serves the next request', async () => {
    const c = keepAliveClient();
    // Far past the old 64 × max read-on: the reader used to leave the loop and destroy the request.
    c.post(Buffer.alloc(300 * 1024, 'a'));
    const first = await c.next();
    expect(first?.status).toBe(413);
    expect(first?.body.error?.code).toBe('PAYLOAD_TOO_LARGE');
    // The answer was complete, so the client reuses the connection: it must be answered, not reset.
    await new Promise((r) => setTimeout(r, 50));
    c.post(Buffer.from('{}'));
    expect(await c.next()).toEqual({ status: 200, body: { data: { bytes: 2 } } });
    expect(c.errors).toEqual([]);
    c.socket.destroy();
  });
});
