/**
 * A small request body read whole, for `body: 'raw'` routes that must accept an empty body
 * (logout) or a non-JSON one (an OAuth form post). Past `max` it stops reading and answers 413
 * with the rest of the body still unread: the server's error path discards that rest, bounded,
 * before the answer ends (http/linger.ts), so the client receives the 413 (docs/reference/conventions.md).
 *
 * Not `for await … break`: leaving the loop destroys the request, and Node destroys a server
 * request detached from its socket (`destroyer` sets `req.socket = null` first), so the socket
 * stays open with the rest of the body unread and the drain cannot run (it sees a destroyed
 * request). The connection looked reusable to the client (the 413 was complete), and the next
 * request sent on it waited for the keep-alive timeout and was reset (the fuzz's ECONNRESET).
 */
import { ApiError } from '../core/errors.js';
import type { RequestStream } from '../core/sink.js';

export function readSmallBody(source: RequestStream, max: number): Promise<Buffer> {
  if (source.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: Error | null, body?: Buffer) => {
      source.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      // Paused, not destroyed: the rest stays for the bounded drain of the error path.
      source.pause();
      stop(new ApiError('PAYLOAD_TOO_LARGE'));
    };
    const onEnd = () => stop(null, Buffer.concat(chunks, size));
    const onError = (err: Error) => stop(err);
    // A connection cut mid-body: nobody is left to answer, but the handler must not wait forever.
    const onClose = () => stop(new ApiError('BAD_REQUEST', 'The request body was cut off'));
    source.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
  });
}
