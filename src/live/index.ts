/** Live queries (docs/reference/live.md): the engine, change matching and the stream transport. */
export { createLiveEngine } from './engine.js';
export type { LiveEngine, LiveEngineOptions } from './engine.js';
export { matches } from './match.js';
export { queryKey, whereKey } from './query-key.js';
export { openStream, negotiateFormat, DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_BUFFERED_BYTES } from './transport.js';
export type { StreamSink, StreamOptions, StreamFormat } from './transport.js';
export { startLiveStream } from './stream.js';
export type { LiveStreamRequest } from './stream.js';
export { serializePayload } from './types.js';
export type { LiveKind, LiveQuery, RunQuery, Subscriber, LiveLogger, LiveStats } from './types.js';
