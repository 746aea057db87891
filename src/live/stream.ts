/**
 * The stream routes' last step, joining the engine and the transport (docs/reference/live.md). The route has
 * already rate-limited, authorized, built the plan, run the first query and row-filtered it;
 * this registers the stream (a cap answers an ordinary JSON 429 because nothing is written
 * before `subscribe` succeeds), starts the response, sends the first payload and ties the
 * stream's end to its unsubscribe.
 */
import type { ApiError } from '../core/errors.js';
import type { Sink } from '../core/sink.js';
import type { LiveEngine } from './engine.js';
import { negotiateFormat, openStream, type StreamOptions, type StreamSink } from './transport.js';
import { serializePayload, type LiveQuery, type Subscriber } from './types.js';

export interface LiveStreamRequest extends Omit<StreamOptions, 'format'> {
  query: LiveQuery;
  /** The data of the first payload (row | null, {items, total}, n). */
  initial: unknown;
  /** `engine.version` read before the first query ran. */
  since?: number;
  /** The client IP the per-IP cap counts against. */
  ip: string;
  /** Per-change pipeline checks (token expiry, row filter); see Subscriber.check. */
  check?: Subscriber['check'];
  /** Default: negotiated from `accept`. */
  format?: StreamOptions['format'];
  /** The request's Accept header (docs/reference/live.md: NDJSON when asked for). */
  accept?: string | undefined;
}

/**
 * The engine's view of one HTTP stream. A class rather than an object of closures: closures made
 * in `startLiveStream` would share its scope and keep the first payload (data and text, up to
 * maxResponseBytes each) alive as long as the stream, outside the live memory budget. The first
 * payload is dropped as soon as it is written.
 */
class SinkSubscriber implements Subscriber {
  initial: unknown;
  initialJson: string | undefined;
  readonly since?: number;
  readonly check?: Subscriber['check'];
  sink: StreamSink | undefined;
  readonly #firstBytes: number;

  constructor(initial: unknown, since: number | undefined, check: Subscriber['check'] | undefined) {
    this.initial = initial;
    this.initialJson = serializePayload(initial);
    this.#firstBytes = this.initialJson.length;
    if (since !== undefined) this.since = since;
    if (check) this.check = check;
  }

  push(json: string): void {
    this.sink?.send(json);
  }

  buffered(): number {
    return this.sink ? this.sink.bufferedBytes : this.#firstBytes;
  }

  fail(err: ApiError): void {
    this.sink?.error(JSON.stringify(err.toJSON()));
  }

  end(): void {
    this.sink?.close();
  }
}

/**
 * Throws ApiError RATE_LIMITED (cap reached) or UNAVAILABLE (engine closed, live memory budget
 * full) before the response starts; otherwise the response belongs to the stream and the
 * returned sink ends it.
 */
export function startLiveStream(engine: LiveEngine, out: Sink, r: LiveStreamRequest): StreamSink {
  // The engine never calls a subscriber from inside subscribe, so `sink` is set before use.
  const subscriber = new SinkSubscriber(r.initial, r.since, r.check);
  const unsubscribe = engine.subscribe(r.query, subscriber, r.ip);
  let sink: StreamSink;
  try {
    sink = openStream(out, {
      format: r.format ?? negotiateFormat(r.accept),
      ...(r.heartbeatMs !== undefined ? { heartbeatMs: r.heartbeatMs } : {}),
      ...(r.maxBufferedBytes !== undefined ? { maxBufferedBytes: r.maxBufferedBytes } : {}),
    });
  } catch (err) {
    unsubscribe();
    throw err;
  }
  subscriber.sink = sink;
  sink.send(subscriber.initialJson!);
  subscriber.initial = undefined;
  subscriber.initialJson = undefined;
  sink.onClose(unsubscribe);
  return sink;
}
