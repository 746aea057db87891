/**
 * An error answered while the body still arrives (docs/reference/conventions.md: "the client receives that answer"):
 * the answer goes out whole at once, and the connection stays open — the rest of the body read
 * and discarded — until the client has sent it all, so its writes never meet a reset socket.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import { bodyPending, drainRest } from './linger.js';
import { sendError } from './respond.js';

let server: Server;
let base: string;

beforeAll(async () => {
  // Refuses every body at once, before reading any of it (as a 413 on Content-Length does).
  server = createServer((req, res) => sendError(res, new ApiError('PAYLOAD_TOO_LARGE'), bodyPending(req) ? drainRest(req) : undefined));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Bytes from a raw TCP client: node:http's client would itself stop writing once answered. */
function rawClient() {
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  let received = '';
  const errors: string[] = [];
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', (err) => errors.push(err.message));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  const write = (chunk: string | Buffer) => new Promise<void>((resolve) => socket.write(chunk, (err) => (err && errors.push(err.message), resolve())));
  let serverEnded = false; // the server's FIN (or a reset) came
  socket.on('end', () => (serverEnded = true));
  socket.on('close', () => (serverEnded = true));
  const answer = async () => {
    while (!/\r\n\r\n\{.*\}$/s.test(received) && !socket.destroyed) await new Promise((r) => setTimeout(r, 5));
    return received;
  };
  return { socket, write, answer, closed, errors, ended: () => serverEnded };
}

describe('answering before the body', () => {
  it('sends the whole answer at once, then reads the rest of the body before closing', async () => {
    const CHUNK = Buffer.alloc(256 * 1024);
    const total = CHUNK.length * 8;
    const c = rawClient();
    // Connection: close is the case in which Node closes the socket as soon as the response
    // ends; with body bytes still unread that close would be a reset (EPIPE / ECONNRESET here).
    await c.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: image/png\r\nContent-Length: ${total}\r\n\r\n`);
    await c.write(CHUNK);
    const answer = await c.answer(); // complete (Content-Length) while most of the body is unsent
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('PAYLOAD_TOO_LARGE');
    // The server is discarding the rest, not resetting: every later write goes through.
    await new Promise((r) => setTimeout(r, 50));
    for (let sent = CHUNK.length; sent < total; sent += CHUNK.length) {
      expect(c.ended(), `closed by the server after ${sent} of ${total} bytes`).toBe(false);
      await c.write(CHUNK);
    }
    await c.closed; // the server closes once the body is in (Connection: close)
    expect(c.errors).toEqual([]);
  });

  it('answers at once and ends the response when no body is pending', async () => {
    const r = await fetch(`${base}/`, { method: 'POST' });
    expect(r.status).toBe(413);
    expect((await r.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
