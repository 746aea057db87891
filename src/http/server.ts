/**
 * The HTTP server: plain node:http, because the benchmark showed a framework's per-request cost
 * matters on the hot path. Every response carries X-Request-Id; every error is the envelope of
 * docs/reference/conventions.md with no stack, SQL or path; 5xx causes are logged server-side with the request id.
 *
 * With a certificate it serves HTTPS on the same port, HTTP/2 and HTTP/1.1 by ALPN
 * (docs/reference/configuration.md, --tls-cert/--tls-key). One lifecycle either way: HTTP/2
 * requests come through node:http2's compatibility API, whose request and response carry the
 * members `handle` uses, so there is no second copy of the request handling. `/db/live` is an
 * HTTP/1.1 upgrade on both (http/live-socket.ts).
 */
import { createServer as createHttpServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { randomBytes } from 'node:crypto';
import type { Metrics } from '../core/metrics.js';
import { ApiError, InfrastructureError, toApiError } from '../core/errors.js';
import { logRequest, type Logger } from '../core/logger.js';
import { applyCors } from './cors.js';
import { runRoute } from './lifecycle.js';
import { bodyPending, drainRest } from './linger.js';
import { createLiveSockets, LIVE_PATH } from './live-socket.js';
import { sendError } from './respond.js';
import type { Router } from './router.js';
import type { DeclaredRoute } from './declare.js';
import type { Forwarder } from './forward.js';
import type { Services } from './services.js';

/** What the server needs from the composition root. */
export interface ServerDeps {
  readonly router: Router;
  readonly services: Services;
  readonly corsOrigins: readonly string[];
  readonly clientIp: (socketAddress: string, forwardedFor: string | undefined) => string;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** Told of every answer where metrics are recorded (the dashboard's request log; docs/reference/dashboard.md Logs). */
  readonly observe?: (method: string, route: string, status: number, ms: number, requestId: string, ip: string) => void;
  /** PEM certificate chain and key: serve HTTPS with HTTP/2 and HTTP/1.1 (ALPN). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** /db/live subscriptions per connection (default 200; docs/reference/live.md). */
  readonly maxSubscriptions?: number;
  /** /db/live connections, server-wide and per client IP (default 10,000 and 100: the stream caps). */
  readonly maxLiveConnections?: { readonly total: number; readonly perIp: number };
  /**
   * A worker of `serve --workers` (docs/reference/scaling.md): routes this answers true for are
   * handed whole to the primary (./forward.ts), which runs their lifecycle, records them and
   * answers; this process neither runs nor counts them.
   */
  readonly forward?: { readonly when: (route: DeclaredRoute) => boolean; readonly to: Forwarder };
  /** The primary: runs before a server-wide route (metrics, logs), so every worker's records are in. */
  readonly gather?: () => Promise<void>;
  /**
   * False on the primary of `serve --workers`: every request it answers was forwarded by a worker,
   * which writes that request's log line (it holds the client and times it end to end), so the one
   * writer spends no CPU on it (docs/scaling.md). Metrics and the dashboard still count it here, once.
   */
  readonly logsRequests?: boolean;
}

/** What the composition root uses of the server, whichever protocol it speaks. */
export type AppServer = Pick<Server, 'listen' | 'close' | 'address' | 'once' | 'closeIdleConnections' | 'closeAllConnections'>;

/** How metrics, logs and the dashboard name the /db/live upgrade (the declared route's label). */
const LIVE_ROUTE = `GET ${LIVE_PATH}`;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const idPrefix = randomBytes(4).toString('hex');
let idCounter = 0;

function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  if (typeof sent === 'string' && REQUEST_ID.test(sent)) return sent;
  return `${idPrefix}-${(++idCounter).toString(36)}`;
}

async function handle(app: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const start = performance.now();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const search = q < 0 ? '' : url.slice(q + 1);
  const requestId = requestIdOf(req);
  res.setHeader('x-request-id', requestId);
  let route = 'unmatched';
  let ip = '';
  let aborted = false;
  /** Counted here (metrics, dashboard, log line), or only logged: the primary counts a forwarded request. */
  let counted = true;
  try {
    if (applyCors(app.corsOrigins, req, res)) return;
    const m = app.router.match(req.method ?? 'GET', path);
    if (!m) throw new ApiError('NOT_FOUND', 'No such route');
    route = m.route.label;
    ip = app.clientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'] as string | undefined);
    if (app.forward !== undefined && app.forward.when(m.route)) {
      counted = false; // the primary counts it, once; its log line is written here (below)
      return await app.forward.to(req, res, ip, requestId, m.route);
    }
    if (m.route.serverWide && app.gather) await app.gather();
    await runRoute(m.route, { req, res, services: app.services, path, search, params: m.params, ip, requestId }, app.services);
  } catch (err) {
    if (clientGone(req, res)) {
      // The client left mid-body or before the answer: nobody to answer, nothing the server did wrong.
      aborted = true;
      app.log.info({ requestId, route, reason: (err as { code?: unknown; message?: unknown })?.code ?? (err as Error)?.message }, 'request aborted by the client');
      return;
    }
    const e = toApiError(err);
    if (e instanceof InfrastructureError) {
      // A full disk or an unreachable database: the operator must act; /health says so until then.
      app.services.health.fail(e.infrastructure);
      app.log.warn({ err: e.cause ?? err, requestId, route, infrastructure: e.infrastructure }, 'request failed: infrastructure unavailable');
    }
    // A full write queue is backpressure working as intended (docs/reference/rules-and-hooks.md), not a server fault.
    else if (e.status >= 500 && e.code !== 'WRITE_QUEUE_FULL') app.log.error({ err: e.cause ?? err, requestId, route }, 'request failed');
    // An unread body is discarded (bounded) before the response ends, so the client gets the answer.
    sendError(res, e, bodyPending(req) ? drainRest(req) : undefined);
  } finally {
    if (counted) record(app, req, path, route, res.statusCode, performance.now() - start, requestId, ip, aborted || (!res.writableFinished && !res.headersSent && clientGone(req, res)));
    // Forwarded: the status the client was sent (the primary's, or this worker's 503 when the primary is not answering).
    else logRequest(app.log, { method: req.method ?? 'GET', path, route, status: res.statusCode, ms: performance.now() - start, requestId });
  }
}

/** The primary of `serve --workers`: requests its workers sent as frames (./forward-exchange.ts) run through the same `handle`. */
export function forwardedHandler(app: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => void handle(app, req, res);
}

function record(app: ServerDeps, req: IncomingMessage, path: string, route: string, status: number, ms: number, requestId: string, ip: string, aborted: boolean): void {
  if (aborted) app.metrics.recordAborted(route);
  else app.metrics.record(route, status, ms);
  app.observe?.(req.method ?? 'GET', route, status, ms, requestId, ip);
  if (app.logsRequests !== false) logRequest(app.log, { method: req.method ?? 'GET', path, route, status, ms, requestId });
}

/** The client is gone: its socket closed, or it aborted the request before its body ended. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  if (res.writableFinished) return false;
  // HTTP/2: this request's stream, not the session's shared socket (unbound once the session ends).
  if (req.httpVersionMajor === 2) return (res as unknown as { stream: { destroyed: boolean } }).stream.destroyed;
  return req.socket.destroyed || (req.readableAborted && !req.complete);
}

export function createServer(app: ServerDeps): AppServer {
  const sockets = createLiveSockets({
    services: app.services,
    corsOrigins: app.corsOrigins,
    clientIp: app.clientIp,
    maxSubscriptions: app.maxSubscriptions ?? 200,
    maxConnections: app.maxLiveConnections?.total ?? 10_000,
    maxConnectionsPerIp: app.maxLiveConnections?.perIp ?? 100,
  });
  const server = app.tls ? secureServer(app, app.tls) : plainServer(app);
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if ((req.headers.upgrade ?? '').toLowerCase() === 'websocket') {
      // Logged and counted like a request, with the status of the handshake (101 or the refusal's).
      const start = performance.now();
      const requestId = requestIdOf(req);
      const { status, ip } = sockets.handleUpgrade(req, socket, head, requestId);
      record(app, req, LIVE_PATH, LIVE_ROUTE, status, performance.now() - start, requestId, ip, false);
      return;
    }
    answerWithoutUpgrade(app, req, socket);
  });
  // Upgraded sockets are no longer the HTTP server's to close: end them when it closes.
  const close = server.close.bind(server);
  server.close = ((cb?: (err?: Error) => void) => {
    sockets.close();
    return close(cb);
  }) as typeof server.close;
  return server;
}

/**
 * Another upgrade (`Upgrade: h2c` from `curl --http2 http://…`): with an 'upgrade' listener node
 * hands every upgrade request here, so answer it as the ordinary request it also is, through the
 * same `handle`, on a connection that then closes (a bodyless GET; the parser is gone).
 */
function answerWithoutUpgrade(app: ServerDeps, req: IncomingMessage, socket: Socket): void {
  socket.on('error', () => undefined);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => socket.end());
  req.push(null); // the body, if any, is not read: this request ends here
  void handle(app, req, res);
}

function plainServer(app: ServerDeps): Server {
  const server = createHttpServer(
    {
      // docs/reference/conventions.md: request lines up to 64 KiB (the `?body=` of GET routes).
      maxHeaderSize: 80 * 1024,
      keepAliveTimeout: 5_000,
      requestTimeout: 120_000,
      headersTimeout: 30_000,
    },
    (req, res) => void handle(app, req, res),
  );
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":{"code":"BAD_REQUEST","message":"Malformed HTTP request"}}');
  });
  return server;
}

/**
 * HTTPS: HTTP/2 by ALPN, HTTP/1.1 for clients without it (`allowHTTP1`). The compat request and
 * response are handed to the same `handle` as node:http's (the cast is the compat API's promise:
 * the members handle, the lifecycle and the sinks use exist on both). The HTTP/2 server has no
 * closeIdleConnections/closeAllConnections: they are kept here from its own sessions and sockets.
 */
function secureServer(app: ServerDeps, tls: NonNullable<ServerDeps['tls']>): Http2SecureServer & AppServer {
  const server = createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      allowHTTP1: true,
      // docs/reference/conventions.md: request lines up to 64 KiB (the `?body=` of GET routes), as on HTTP/1.
      maxSendHeaderBlockLength: 80 * 1024,
      // Many stream routes on one connection is what HTTP/2 is for (docs/live.md), bounded: the
      // per-IP stream cap (100 by default) binds long before.
      settings: { maxHeaderListSize: 80 * 1024, maxConcurrentStreams: 1000 },
    },
    (req, res) => {
      // HTTP/1.1 over TLS: count requests in flight per socket, so a shutdown closes the idle ones.
      if (req.httpVersionMajor === 1) {
        const socket = req.socket;
        inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
        res.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
      }
      void handle(app, req as unknown as IncomingMessage, res as unknown as ServerResponse);
    },
  );
  const sessions = new Set<Http2Session>();
  const secure = new Set<TLSSocket>();
  const inFlight = new WeakMap<Socket, number>();
  const upgraded = new WeakSet<Socket>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    secure.add(socket);
    socket.once('close', () => secure.delete(socket));
  });
  // A /db/live socket is closed by its own handshake (1001), not cut as an idle connection.
  server.on('upgrade', (_req: IncomingMessage, socket: Socket) => upgraded.add(socket));
  return Object.assign(server, {
    closeIdleConnections() {
      for (const s of sessions) s.close(); // graceful: open streams finish first
      for (const socket of secure) {
        const h2 = socket.alpnProtocol === 'h2';
        if (!h2 && !upgraded.has(socket) && (inFlight.get(socket) ?? 0) === 0) socket.destroy();
      }
    },
    closeAllConnections() {
      for (const s of secure) s.destroy();
    },
  }) as Http2SecureServer & AppServer;
}
