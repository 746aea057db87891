/**
 * Answering before the whole body arrived (413, 415, 400 on an upload; 429, 401, 403 before a
 * body is read): closing the socket while the client still sends makes the kernel reset the
 * connection (RST, RFC 9112 §9.6), and the client, still writing, sees EPIPE or ECONNRESET
 * instead of the answer it was already sent. Node closes the socket as soon as a response ends
 * when the connection is not kept alive, so two things are needed (docs/reference/conventions.md: "the client receives
 * that answer"):
 * - the rest of the body is read and discarded — never stored — for a bounded time and size;
 *   past either bound the socket is closed;
 * - the answer is written whole at once (its Content-Length tells the client it is complete) but
 *   the response is *ended* only once that discarding is over, so Node's close finds no unread
 *   bytes in the socket and sends FIN, not RST.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const LINGER_MS = 10_000;
const LINGER_BYTES = 256 * 1024 * 1024;

const draining = new WeakMap<IncomingMessage, Promise<void>>();
const DONE = Promise.resolve();

/** True while the request's body has not been read to its end. */
export function bodyPending(req: IncomingMessage): boolean {
  return !req.complete && !req.readableEnded && !req.destroyed;
}

/**
 * Discards the rest of the body, bounded; resolves once it ended or the socket closed.
 * Idempotent: the body reader starts it at the limit and the server's error path calls it again.
 */
export function drainRest(req: IncomingMessage): Promise<void> {
  if (!bodyPending(req)) return draining.get(req) ?? DONE;
  const known = draining.get(req);
  if (known) return known;
  const done = new Promise<void>((resolve) => {
    let seen = 0;
    // HTTP/2: end this stream only; the session's socket carries other requests.
    const stop = () => (req.httpVersionMajor === 2 ? req.destroy() : req.socket.destroy());
    const timer = setTimeout(stop, LINGER_MS).unref();
    const finish = () => {
      clearTimeout(timer);
      resolve();
    };
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > LINGER_BYTES) stop();
    });
    req.once('end', finish);
    req.once('close', finish);
    req.resume();
  });
  draining.set(req, done);
  return done;
}

/**
 * Writes `chunk` as the whole answer now and ends the response once `bodyDone` resolves (see
 * above). The headers must already carry the Content-Length of `chunk`.
 */
export function endAfterBody(res: ServerResponse, chunk: string, bodyDone: Promise<void>): void {
  res.write(chunk);
  void bodyDone.then(() => {
    if (!res.writableEnded && !res.destroyed) res.end();
  });
}
