/**
 * The HTTP server: plain node:http, because the benchmark showed a framework's per-request cost
 * matters on the hot path. Every response carries X-Request-Id; every error is the envelope of
 * SPEC §2 with no stack, SQL or path; 5xx causes are logged server-side with the request id.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Metrics } from '../core/metrics.js';
import { ApiError, InfrastructureError, toApiError } from '../core/errors.js';
import { logRequest, type Logger } from '../core/logger.js';
import { applyCors } from './cors.js';
import { runRoute } from './lifecycle.js';
import { bodyPending, drainRest } from './linger.js';
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
  /** Told of every answer where metrics are recorded (the dashboard's request log; SPEC §11a Logs). */
  readonly observe?: (method: string, route: string, status: number, ms: number, requestId: string, ip: string) => void;
  /**
   * A worker of `serve --workers` (docs/reference/scaling.md): routes this answers true for are
   * handed whole to the primary (./forward.ts), which runs their lifecycle, records them and
   * answers; this process neither runs nor counts them.
   */
  readonly forward?: { readonly when: (route: DeclaredRoute) => boolean; readonly to: Forwarder };
  /** The primary: runs before a server-wide route (metrics, logs), so every worker's records are in. */
  readonly gather?: () => Promise<void>;
}

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
  let counted = true;
  try {
    if (applyCors(app.corsOrigins, req, res)) return;
    const m = app.router.match(req.method ?? 'GET', path);
    if (!m) throw new ApiError('NOT_FOUND', 'No such route');
    route = m.route.label;
    ip = app.clientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'] as string | undefined);
    if (app.forward !== undefined && app.forward.when(m.route)) {
      counted = false; // the primary counts it, once
      return await app.forward.to(req, res, ip, requestId);
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
    // A full write queue is backpressure working as intended (SPEC §6), not a server fault.
    else if (e.status >= 500 && e.code !== 'WRITE_QUEUE_FULL') app.log.error({ err: e.cause ?? err, requestId, route }, 'request failed');
    // An unread body is discarded (bounded) before the response ends, so the client gets the answer.
    sendError(res, e, bodyPending(req) ? drainRest(req) : undefined);
  } finally {
    if (counted) record(app, req, path, route, res.statusCode, performance.now() - start, requestId, ip, aborted || (!res.writableFinished && !res.headersSent && clientGone(req, res)));
  }
}

function record(app: ServerDeps, req: IncomingMessage, path: string, route: string, status: number, ms: number, requestId: string, ip: string, aborted: boolean): void {
  if (aborted) app.metrics.recordAborted(route);
  else app.metrics.record(route, status, ms);
  app.observe?.(req.method ?? 'GET', route, status, ms, requestId, ip);
  logRequest(app.log, { method: req.method ?? 'GET', path, route, status, ms, requestId });
}

/** The client is gone: its socket closed, or it aborted the request before its body ended. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  if (res.writableFinished) return false;
  return req.socket.destroyed || (req.readableAborted && !req.complete);
}

export function createServer(app: ServerDeps): Server {
  const server = createHttpServer(
    {
      // SPEC §13.18: request lines up to 64 KiB (the `?body=` of GET routes).
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
