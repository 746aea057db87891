/**
 * `GET /db/live`: the WebSocket transport of the live read (docs/reference/live.md). This file
 * is only the socket: the upgrade (path, origin allow-list, subprotocol), frame limits, pings,
 * the slow-reader cut-off and release on close. What the messages mean — subscriptions through
 * the same stages as the stream routes — is pipeline/live-session.ts.
 *
 * Limits: a frame over 64 KiB closes with 1009 (ws's maxPayload); unsent data past
 * `maxResponseBytes` closes with 1008; a ping every heartbeat (15 s by default) and a connection
 * silent for three heartbeats (45 s) is cut. Closing releases every subscription at once.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { ApiError } from '../core/errors.js';
import { sharedPromise } from '../core/shared-promise.js';
import { LiveSession } from '../pipeline/live-session.js';
import type { Services } from './services.js';

export const LIVE_PATH = '/db/live';
export const LIVE_PROTOCOL = 'tablebase.v1';
/** Largest client frame (docs/reference/live.md): a subscribe body is a `?body=`, at most 64 KiB. */
export const MAX_FRAME_BYTES = 64 * 1024;

export interface LiveSocketDeps {
  readonly services: Services;
  readonly corsOrigins: readonly string[];
  readonly clientIp: (socketAddress: string, forwardedFor: string | undefined) => string;
  /** Subscriptions per connection (default 200). */
  readonly maxSubscriptions: number;
  /** Open connections, server-wide and per client IP (the stream caps' values). */
  readonly maxConnections: number;
  readonly maxConnectionsPerIp: number;
}

/** The server side of /db/live; `handleUpgrade` is the HTTP server's 'upgrade' listener. */
export interface LiveSockets {
  /** Answers the status sent (101, or the refusal's) and the client IP, for the request log. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, requestId: string): { status: number; ip: string };
  /** Open connections. */
  readonly size: number;
  /** Server shutdown: closes every connection with 1001. */
  close(): void;
}

export function createLiveSockets(d: LiveSocketDeps): LiveSockets {
  // ws (which loads node:https, tls and zlib: 50-100 ms of CPU) is loaded by the first upgrade,
  // not at start: a server nobody opens /db/live on never pays for it.
  let wss: WebSocketServer | undefined;
  const load = sharedPromise(async () => {
    const { WebSocketServer } = await import('ws');
    // perMessageDeflate off: compression state costs ~300 KB per socket (zlib), and payloads are
    // small JSON. clientTracking: `close()` needs the set.
    const server = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
      handleProtocols: (offered) => (offered.has(LIVE_PROTOCOL) ? LIVE_PROTOCOL : false),
    });
    // Every answer carries X-Request-Id (docs/reference/conventions.md), the 101 included.
    server.on('headers', (headers, req) => headers.push(`X-Request-Id: ${requestIds.get(req) ?? ''}`));
    return (wss = server);
  });
  const requestIds = new WeakMap<IncomingMessage, string>();
  /** Upgrades accepted while ws loads: they count against the caps like open connections. */
  const waiting = new Map<string, number>();
  let waitingAll = 0;
  const wait = (ip: string, by: 1 | -1) => {
    waitingAll += by;
    const n = (waiting.get(ip) ?? 0) + by;
    if (n > 0) waiting.set(ip, n);
    else waiting.delete(ip);
  };
  const heartbeatMs = d.services.config.streamHeartbeatMs;
  // A connection costs memory before it subscribes to anything: connections are capped like
  // streams (docs/reference/live.md): per client IP and server-wide, by the same two settings.
  const perIp = new Map<string, number>();
  let closing = false;

  function connection(ws: WebSocket, req: IncomingMessage, ip: string): void {
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    const maxBuffered = d.services.config.maxResponseBytes;
    let cut = false;
    const session = new LiveSession({
      rt: d.services.rt,
      engine: d.services.live,
      ip,
      authorization: req.headers.authorization,
      maxSubscriptions: d.maxSubscriptions,
      maxResponseBytes: maxBuffered,
      caps: d.services.streamCaps,
      send: (text) => {
        if (cut || ws.readyState !== ws.OPEN) return;
        ws.send(text);
        if (ws.bufferedAmount > maxBuffered) {
          // The client is not reading: 1008, release now, and do not wait for its close frame.
          cut = true;
          session.close();
          ws.close(1008, 'Too much unsent data: read faster');
          setTimeout(() => ws.terminate(), 1000).unref();
        }
      },
    });
    let heard = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - heard > 3 * heartbeatMs) return void ws.terminate();
      ws.ping();
    }, heartbeatMs);
    timer.unref();
    ws.on('pong', () => (heard = Date.now()));
    ws.on('message', (data, isBinary) => {
      heard = Date.now();
      if (isBinary) return void ws.send(JSON.stringify({ type: 'error', status: 400, error: new ApiError('BAD_REQUEST', 'Messages are JSON text frames').toJSON().error }));
      try {
        session.handle(data.toString());
      } catch (err) {
        // A bug must not take the process down from a socket listener: log it, answer a 500.
        d.services.rt.log.error({ err }, '/db/live message failed');
        ws.send(JSON.stringify({ type: 'error', status: 500, error: new ApiError('INTERNAL').toJSON().error }));
      }
    });
    ws.on('error', () => undefined); // 1009 and protocol errors: ws closes the socket itself
    ws.on('close', () => {
      clearInterval(timer);
      session.close();
      const n = (perIp.get(ip) ?? 1) - 1;
      if (n > 0) perIp.set(ip, n);
      else perIp.delete(ip);
    });
  }

  function overCap(ip: string): ApiError | undefined {
    if ((wss?.clients.size ?? 0) + waitingAll >= d.maxConnections || (perIp.get(ip) ?? 0) + (waiting.get(ip) ?? 0) >= d.maxConnectionsPerIp)
      return new ApiError('RATE_LIMITED', 'Too many open live connections', { headers: { 'Retry-After': '1' } });
    return undefined;
  }

  return {
    handleUpgrade(req, socket, head, requestId) {
      socket.on('error', () => undefined);
      const ip = d.clientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'] as string | undefined);
      const refusal = closing ? new ApiError('UNAVAILABLE', 'The server is shutting down') : (refuse(req, d.corsOrigins) ?? overCap(ip));
      if (refusal) {
        reject(socket, refusal, requestId);
        return { status: refusal.status, ip };
      }
      requestIds.set(req, requestId);
      if (wss) wss.handleUpgrade(req, socket, head, (ws) => connection(ws, req, ip));
      else {
        wait(ip, 1);
        load().then(
          (server) => {
            wait(ip, -1);
            if (closing) reject(socket, new ApiError('UNAVAILABLE', 'The server is shutting down'), requestId);
            else server.handleUpgrade(req, socket, head, (ws) => connection(ws, req, ip));
          },
          (err: unknown) => {
            wait(ip, -1);
            d.services.rt.log.error({ err }, '/db/live: loading ws failed');
            reject(socket, new ApiError('INTERNAL'), requestId);
          },
        );
      }
      return { status: 101, ip };
    },
    get size() {
      return wss?.clients.size ?? 0;
    },
    close() {
      closing = true;
      if (!wss) return;
      const clients = wss.clients;
      for (const ws of clients) ws.close(1001, 'Server shutting down');
      // A client that never answers the close frame must not hold the shutdown.
      setTimeout(() => {
        for (const ws of clients) ws.terminate();
      }, 1000).unref();
    },
  };
}

/** Why an upgrade is refused before the handshake, or undefined. */
function refuse(req: IncomingMessage, corsOrigins: readonly string[]): ApiError | undefined {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  if ((q < 0 ? url : url.slice(0, q)) !== LIVE_PATH) return new ApiError('NOT_FOUND', 'No such route');
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return new ApiError('BAD_REQUEST', 'Only WebSocket upgrades are served');
  // Browsers do not apply CORS to WebSockets: a page of any origin may open one, so the server
  // checks Origin itself. Allowed: no Origin (not a browser), the server's own origin, or one on
  // the CORS allow-list (docs/reference/configuration.md, corsOrigins).
  const origin = req.headers.origin;
  if (origin && !corsOrigins.includes('*') && !corsOrigins.includes(origin) && !sameOrigin(origin, req.headers.host)) {
    return new ApiError('FORBIDDEN', 'Origin not allowed');
  }
  const offered = req.headers['sec-websocket-protocol'];
  if (offered !== undefined && !offered.split(',').some((p) => p.trim() === LIVE_PROTOCOL)) {
    return new ApiError('BAD_REQUEST', `The subprotocol must be ${LIVE_PROTOCOL}`);
  }
  return undefined;
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** Answers a refused upgrade with the error envelope, on the raw socket. */
function reject(socket: Duplex, err: ApiError, requestId: string): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(err.toJSON());
  const extra = Object.entries(err.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${err.status} ${err.code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
