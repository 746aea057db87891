/** The node:http side of core/sink.ts: what streamed and file answers write to. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Sink } from '../core/sink.js';

export function responseSink(req: IncomingMessage, res: ServerResponse): Sink {
  return {
    get started() {
      return res.headersSent;
    },
    get gone() {
      // HTTP/2: this request's stream, not the session's shared socket (gone with the session).
      if (req.httpVersionMajor === 2) return (res as unknown as { stream: { destroyed: boolean } }).stream.destroyed;
      return req.socket.destroyed || res.destroyed;
    },
    get bufferedBytes() {
      return res.writableLength;
    },
    start(status, headers) {
      // HTTP/2 forbids connection-specific headers (RFC 9113 §8.2.2): a stream is not a connection.
      if (req.httpVersionMajor === 2 && 'Connection' in headers) {
        const { Connection: _dropped, ...rest } = headers as Record<string, string | number>;
        headers = rest;
      }
      res.writeHead(status, headers as Record<string, string | number>);
      res.flushHeaders();
      // Small frames must leave at once, not wait for Nagle's algorithm.
      req.socket.setNoDelay(true);
    },
    write: (chunk) => void res.write(chunk),
    end: (chunk) => void (chunk === undefined ? res.end() : res.end(chunk)),
    destroy: () => void res.destroy(),
    async pipeFrom(source) {
      try {
        await pipeline(source, res);
      } catch {
        // The client went away, or a read failed mid-body: pipeline has destroyed both ends.
      }
    },
    onGone(listener) {
      // Not req 'close': since Node 16 a request emits it once its body is read, while the
      // connection lives on. The response's listeners stay (a late 'error' must find one); a
      // keep-alive socket outlives this response, so its listener is removable.
      res.on('close', listener);
      res.on('error', listener);
      // On HTTP/2 the socket is the whole session's, shared by every stream: the response's
      // 'close' already tells this stream's end, and one listener per stream would pile up.
      if (req.httpVersionMajor === 2) return () => undefined;
      const socket = req.socket;
      socket.on('close', listener);
      return () => void socket.off('close', listener);
    },
  };
}
