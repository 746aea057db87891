/** The node:http side of core/sink.ts: what streamed and raw answers write to. */
import type { ServerResponse } from 'node:http';
import type { Sink } from '../core/sink.js';

export function responseSink(res: ServerResponse): Sink {
  return {
    start: (status, headers) => void res.writeHead(status, headers),
    write: (chunk) => res.write(chunk),
    end: (chunk) => void (chunk === undefined ? res.end() : res.end(chunk)),
    destroy: () => void res.destroy(),
    onDrain: (listener) => void res.on('drain', listener),
    onClose: (listener) => void res.once('close', listener),
    get started() {
      return res.headersSent;
    },
    get closed() {
      return res.destroyed || res.writableEnded;
    },
  };
}
