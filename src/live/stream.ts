/**
 * The stream routes' last step, joining the engine and the transport (SPEC §7). The route has
 * already rate-limited, authorized, built the plan, run the first query and row-filtered it;
 * this registers the stream (a cap answers an ordinary JSON 429 because nothing is written
 * before `subscribe` succeeds), starts the response, sends the first payload and ties the
 * stream's end to its unsubscribe.
 */
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
  /** The request's Accept header (SPEC §7: NDJSON when asked for). */
  accept?: string | undefined;
}

/**
 * Throws ApiError RATE_LIMITED (cap reached) or UNAVAILABLE (engine closed) before the response
 * starts; otherwise the response belongs to the stream and the returned sink ends it.
 */
export function startLiveStream(engine: LiveEngine, out: Sink, r: LiveStreamRequest): StreamSink {
  const initialJson = serializePayload(r.initial);
  // The engine never calls a subscriber from inside subscribe, so `sink` is set before use.
  let sink: StreamSink | undefined;
  const subscriber: Subscriber = {
    initial: r.initial,
    initialJson,
    ...(r.since !== undefined ? { since: r.since } : {}),
    ...(r.check ? { check: r.check } : {}),
    push: (json) => sink?.send(json),
    fail: (err) => sink?.error(JSON.stringify(err.toJSON())),
    end: () => sink?.close(),
  };
  const unsubscribe = engine.subscribe(r.query, subscriber, r.ip);
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
  sink.send(initialJson);
  sink.onClose(unsubscribe);
  return sink;
}
