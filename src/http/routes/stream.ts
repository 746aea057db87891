/**
 * /db/stream, /db/stream/list, /db/stream/count (docs/reference/live.md): one transport of the
 * live read (pipeline/live-read.ts; /db/live is the other). Steps 1–5 run before the response
 * starts, so a denial is an ordinary JSON error; the live engine then re-runs the query after
 * each committed change that can affect it, and the read's `check` re-applies the pipeline per
 * change: an expired or revoked token, or a row now failing the row filter, ends the stream.
 */
import { Type } from '@sinclair/typebox';
import { startLiveStream } from '../../live/index.js';
import { openLiveRead } from '../../pipeline/index.js';
import type { DataOp } from '../../pipeline/operation.js';
import { ApiError } from '../../core/errors.js';
import { defineRoute, modelSchema, stream } from '../declare.js';
import { LIVE_PROTOCOL } from '../live-socket.js';
import { ClientMessage, ServerMessage } from './live-messages.js';
import { dataKey, operationFor } from './data.js';

const NOTE =
  'One payload on connect, then one after each committed change that alters the result; identical results are not pushed twice. Rules, rate limit and the first query run before the response starts, so a denial is an ordinary JSON error.';

function streamRoute(path: string, op: DataOp, summary: string, body: string, data: string, description: string, rule: string) {
  return defineRoute({
    method: 'GET',
    path,
    family: 'stream',
    summary,
    description: `${NOTE} ${rule}`,
    operationId: op,
    access: 'optional',
    rateLimit: dataKey(op),
    body: modelSchema(body),
    responses: {
      200: {
        description,
        headers: { 'Cache-Control': Type.Literal('no-cache'), 'X-Accel-Buffering': Type.Literal('no') },
        content: { 'text/event-stream': modelSchema(`SseOf${data}`), 'application/x-ndjson': modelSchema(`NdjsonOf${data}`) },
      },
    },
    errors: ['NOT_FOUND', 'RESPONSE_TOO_LARGE'],
    handler: async (input, s) => {
      const o = operationFor(s.rt.model, op, input);
      const read = await openLiveRead(s.rt, s.live, o, s.config.maxResponseBytes); //  2–5 (pipeline/live-read.ts)
      const accept = input.headers.accept as string | undefined;
      // With workers the caps count the whole server (docs/reference/scaling.md): a place first.
      const release = s.streamCaps ? await s.streamCaps.acquire(input.ip) : undefined;
      if (release === null) throw new ApiError('RATE_LIMITED', 'Too many open streams', { headers: { 'Retry-After': '1' } });
      return stream((sink) => {
        try {
          const live = startLiveStream(s.live, sink, { ...read, ip: input.ip, accept, heartbeatMs: s.config.streamHeartbeatMs });
          if (release) live.onClose(release);
        } catch (err) {
          release?.();
          throw err;
        }
      });
    },
  });
}

export const streamRoutes = [
  streamRoute('/db/stream', 'streamOne', 'Stream the first row matching `where`', 'GetBody', 'NullableRow', '`{"data": row}`, or `{"data": null}` while no row matches', 'Rule: canView; policy: get.'),
  streamRoute('/db/stream/list', 'streamList', 'Stream a page of rows with its total', 'ListBody', 'Page', '`{"data": {"items", "total"}}` per payload', 'Rule: canList; policy: list.'),
  streamRoute('/db/stream/count', 'streamCount', 'Stream the count of matching rows', 'CountBody', 'Count', '`{"data": n}` per payload', 'Rule: canCount; policy: count.'),
  // /db/live is answered by the upgrade (http/live-socket.ts); this declaration documents it and
  // answers a plain GET that did not ask to upgrade.
  defineRoute({
    method: 'GET',
    path: '/db/live',
    family: 'stream',
    summary: 'Every live query on one WebSocket',
    description: `Upgrades to a WebSocket (RFC 6455, subprotocol \`${LIVE_PROTOCOL}\`; wss:// over HTTPS/1.1) carrying any number of subscriptions, each behaving exactly as its stream route (/db/stream, /db/stream/list, /db/stream/count): same rate-limit policy and counter (a subscribe counts as one request), rules, row filter, first payload and change-driven pushes. Messages are JSON text frames; their shapes are the two media types of the 101 answer (client → server, server → client). A token comes in the upgrade's Authorization header or an \`auth\` message; a later \`auth\` re-authorizes every open subscription. Limits: 200 subscriptions per connection; the per-IP and server-wide stream caps count subscriptions and streams together; a frame over 64 KiB closes with 1009; unsent data past maxResponseBytes closes with 1008; pings every 15 s, a connection silent for 45 s is closed. The Origin must be the server's own or on the CORS allow-list (403 otherwise).`,
    operationId: 'live',
    access: 'public',
    body: 'none',
    responses: {
      101: {
        description: 'Switching Protocols: the connection is now a WebSocket speaking tablebase.v1',
        content: { 'application/vnd.tablebase.live-client+json': ClientMessage, 'application/vnd.tablebase.live-server+json': ServerMessage },
      },
    },
    errors: ['BAD_REQUEST', 'FORBIDDEN'],
    handler: () => {
      throw new ApiError('BAD_REQUEST', `Connect with a WebSocket: Upgrade: websocket, Sec-WebSocket-Protocol: ${LIVE_PROTOCOL}`);
    },
  }),
];
