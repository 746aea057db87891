/**
 * Answering before the whole body arrived (413, 415, 400 on an upload): closing the socket while
 * the client still sends makes the kernel reset the connection, and the client can lose the answer
 * it was already sent (RFC 9112 §9.6). So the rest of the body is read and discarded — never
 * stored — for a bounded time and size; past either bound the socket is closed.
 */
import type { IncomingMessage } from 'node:http';

const LINGER_MS = 10_000;
const LINGER_BYTES = 256 * 1024 * 1024;

const draining = new WeakSet<IncomingMessage>();

/** Idempotent: the body reader starts it at the limit and the server's error path calls it again. */
export function drainRest(req: IncomingMessage): void {
  if (req.complete || req.destroyed || draining.has(req)) return;
  draining.add(req);
  let seen = 0;
  const stop = () => req.socket.destroy();
  const timer = setTimeout(stop, LINGER_MS).unref();
  req.removeAllListeners('data');
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > LINGER_BYTES) {
      clearTimeout(timer);
      stop();
    }
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}
