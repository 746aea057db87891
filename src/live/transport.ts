/**
 * Stream framing over a response sink (core/sink.ts; docs/reference/live.md): Server-Sent Events by default, NDJSON with
 * `Accept: application/x-ndjson`. The sink owns the heartbeat timer and the disconnect
 * bookkeeping: whatever ends the stream (client gone, socket error, slow reader, server close)
 * clears the timer and calls the onClose callbacks exactly once.
 *
 * Threat: a client that stops reading makes every write pile up in the response buffer. Each
 * write counts the bytes already buffered *plus the frame being written*: a frame that would
 * pass `maxBufferedBytes` on top of unsent bytes drops the client instead of being queued. A
 * frame alone is always written (payloads are capped by maxResponseBytes, docs/reference/data.md), so one stream
 * holds at most max(`maxBufferedBytes`, one payload).
 */
import type { Sink } from '../core/sink.js';

export type StreamFormat = 'sse' | 'ndjson';

export interface StreamOptions {
  format?: StreamFormat;
  /** Heartbeat interval (docs/reference/live.md: 15 s by default). */
  heartbeatMs?: number;
  /** Unsent bytes allowed before the client is dropped (default 1 MiB). */
  maxBufferedBytes?: number;
}

export interface StreamSink {
  /** Sends one payload (a serialized `{"data": …}`); ignored once closed. */
  send(payloadJson: string): void;
  /** Sends one error payload (a serialized `{"error": …}`), then closes. */
  error(errorJson: string): void;
  /** Ends the response normally. */
  close(): void;
  /** Runs `cb` once when the stream ends for any reason (at once if it already has). */
  onClose(cb: () => void): void;
  readonly closed: boolean;
  /** Bytes written but not yet sent (0 once closed): counted against the live memory budget. */
  readonly bufferedBytes: number;
  /** Why it ended: `client` (disconnect or socket error), `slow` (dropped), `server` (close/error). */
  readonly closeReason: 'client' | 'slow' | 'server' | undefined;
}

export const DEFAULT_HEARTBEAT_MS = 15_000;
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
/** SSE payloads longer than this are written apart from their framing (see `send`). */
const SPLIT_FRAMES_OVER = 64 * 1024;

const CONTENT_TYPE: Record<StreamFormat, string> = { sse: 'text/event-stream', ndjson: 'application/x-ndjson' };
const NDJSON_TYPES = new Set(['application/x-ndjson', 'application/ndjson']);

/**
 * Picks the framing from an Accept header: NDJSON when it is asked for with a higher quality
 * than `text/event-stream` (ties go to the one listed first); SSE otherwise (docs/reference/live.md default).
 */
export function negotiateFormat(accept: string | undefined): StreamFormat {
  if (!accept) return 'sse';
  let ndjson = { q: 0, at: Infinity };
  let sse = { q: 0, at: Infinity };
  accept.split(',').forEach((part, at) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q)) return;
    if (NDJSON_TYPES.has(type!) && q > ndjson.q) ndjson = { q, at };
    if (type === 'text/event-stream' && q > sse.q) sse = { q, at };
  });
  if (ndjson.q <= 0) return 'sse';
  return ndjson.q > sse.q || (ndjson.q === sse.q && ndjson.at < sse.at) ? 'ndjson' : 'sse';
}

/**
 * The engine hands the same payload string to every stream of a query one after another, and an
 * NDJSON frame is the same for all of them: encode it once, not once per subscriber.
 */
let lastText: string | undefined;
let lastLine: Buffer = Buffer.alloc(0);
function ndjsonLine(payloadJson: string): Buffer {
  if (payloadJson !== lastText) {
    lastText = payloadJson;
    lastLine = Buffer.from(`${payloadJson.replace(/\r?\n/g, ' ')}\n`, 'utf8');
  }
  return lastLine;
}

/**
 * The same for a large SSE payload's data. Written as a string, every socket that cannot take it
 * at once would hold its own native copy sized for the worst-case UTF-8 encoding (three bytes a
 * character: 24 MB per stream for an 8 MB payload, outside the heap and above what
 * `bufferedBytes` reports); a Buffer is shared by every socket that queues it and counted exactly.
 */
let lastSseText: string | undefined;
let lastSseData: Buffer = Buffer.alloc(0);
function sseData(payloadJson: string): Buffer {
  if (payloadJson !== lastSseText) {
    lastSseText = payloadJson;
    // JSON.stringify never emits a raw newline, but an SSE data line must not contain one.
    lastSseData = Buffer.from(payloadJson.includes('\n') ? payloadJson.split(/\r?\n/).join('\ndata: ') : payloadJson, 'utf8');
  }
  return lastSseData;
}

class SinkStream implements StreamSink {
  #out: Sink;
  #format: StreamFormat;
  #maxBuffered: number;
  #timer: NodeJS.Timeout;
  #nextId = 1;
  #closeCbs: (() => void)[] = [];
  #reason: StreamSink['closeReason'];
  #stopListening: (() => void) | null;

  constructor(out: Sink, o: StreamOptions) {
    this.#out = out;
    this.#format = o.format ?? 'sse';
    this.#maxBuffered = o.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    out.start(200, { 'Content-Type': CONTENT_TYPE[this.#format], 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    this.#stopListening = out.onGone(() => this.#finish('client'));
    this.#timer = setInterval(() => this.#write(this.#format === 'sse' ? ': ping\n\n' : '\n'), o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    this.#timer.unref();
    if (out.gone) this.#finish('client'); // gone before we started
  }

  get closed(): boolean {
    return this.#reason !== undefined;
  }

  get bufferedBytes(): number {
    return this.closed ? 0 : this.#out.bufferedBytes;
  }

  get closeReason(): StreamSink['closeReason'] {
    return this.#reason;
  }

  send(payloadJson: string): void {
    if (this.closed) return;
    if (this.#format === 'ndjson') {
      this.#write(ndjsonLine(payloadJson));
      return;
    }
    const id = this.#nextId++;
    // A large payload goes out as its own write, as one Buffer shared by every stream (`sseData`):
    // concatenated, every stream would flatten its own copy of it on the heap (garbage the live
    // memory budget cannot see). Small frames stay one write: measured faster than corking a
    // shared payload between the `id:` line and the blank line.
    if (payloadJson.length > SPLIT_FRAMES_OVER) {
      this.#write(`id: ${id}\ndata: `, sseData(payloadJson), '\n\n');
      return;
    }
    // JSON.stringify never emits a raw newline, but an SSE data line must not contain one.
    const data = payloadJson.includes('\n') ? payloadJson.split(/\r?\n/).join('\ndata: ') : payloadJson;
    this.#write(`id: ${id}\ndata: ${data}\n\n`);
  }

  error(errorJson: string): void {
    if (this.closed) return;
    const flat = errorJson.replace(/\r?\n/g, ' ');
    this.#write(this.#format === 'sse' ? `event: error\ndata: ${flat}\n\n` : `${flat}\n`);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.#finish('server');
    this.#out.end();
  }

  onClose(cb: () => void): void {
    if (this.closed) cb();
    else this.#closeCbs.push(cb);
  }

  /** Writes one frame (in one or more parts). */
  #write(...parts: (string | Buffer)[]): void {
    if (this.closed) return;
    const buffered = this.#out.bufferedBytes;
    let length = 0;
    for (const p of parts) length += p.length;
    // A string's UTF-16 length is a lower bound of its bytes, and free to read.
    if (buffered > 0 && buffered + length > this.#maxBuffered) {
      // The client is not reading: drop it rather than buffer without bound.
      this.#finish('slow');
      this.#out.destroy();
      return;
    }
    for (const p of parts) this.#out.write(p);
  }

  #finish(reason: NonNullable<StreamSink['closeReason']>): void {
    if (this.closed) return;
    this.#reason = reason;
    clearInterval(this.#timer);
    // The response's own listeners stay (guarded, and a late 'error' must find a listener);
    // a keep-alive socket outlives this response; leave no listener on it.
    this.#stopListening?.();
    this.#stopListening = null;
    for (const cb of this.#closeCbs.splice(0)) {
      try {
        cb();
      } catch {
        // One failing callback must not keep the others from releasing their resources.
      }
    }
  }
}

/** Starts a stream response: headers are flushed at once; payloads follow through the sink. */
export function openStream(out: Sink, options: StreamOptions = {}): StreamSink {
  if (out.started) throw new Error('openStream: the response has already started');
  return new SinkStream(out, options);
}
