/**
 * A worker of `serve --workers` hands a request whole to the primary over private Unix sockets
 * (docs/reference/scaling.md, docs/scaling.md): method, path, headers and body go through
 * unchanged, the client's address travels as the only `X-Forwarded-For` entry (the primary
 * trusts it: nothing but the workers can reach those sockets, mode 0600), and the answer's
 * status, headers and body come back unchanged. Writes on SQLite take this path because hooks
 * run inside the one writer's transaction, so a write cannot be shipped as a value; the whole
 * lifecycle runs where the writer is.
 *
 * Two ways, by what the request is:
 * - frames (./forward-frames.ts, the primary's end in ./forward-exchange.ts): a write whose body
 *   is at most 64 KiB (every data write but the largest batches), read whole here and sent as one
 *   frame on the worker's one connection; the answer comes back as one frame. The common path.
 * - HTTP/1.1 (below), streamed both ways with backpressure: bigger or chunked bodies (photo
 *   uploads), and the server-wide reads (dashboard figures, photo bytes), whose answers may be
 *   large or long.
 */
import { Agent, request, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeader, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { ApiError } from '../core/errors.js';
import type { DeclaredRoute } from './declare.js';
import type { AnswerMeta, RequestMeta } from './forward-exchange.js';
import { ANSWER, CANCEL, DATA, END, FrameReader, FrameWriter, REQUEST, RESET, type Frame } from './forward-frames.js';
import { bodyPending, drainRest } from './linger.js';
import { sendError } from './respond.js';

export type Forwarder = (req: IncomingMessage, res: ServerResponse, ip: string, requestId: string, route: DeclaredRoute) => Promise<void>;

/** Bodies up to this size go as one frame; bigger ones stream over HTTP. */
export const FRAMED_BODY_MAX = 64 * 1024;
/** Answers this large get the stall cut of src/http/large-answers.ts here, where the client's socket is. */
const LARGE_ANSWER = 256 * 1024;
const STALL_MS = 10_000;

/** The primary's frames socket, beside its HTTP one. */
export const framesSocketPath = (socketPath: string): string => `${socketPath}.f`;

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the message.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEndOut(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined && !HOP.has(k)) out[k] = v;
  }
  return out;
}

export function createForwarder(socketPath: string): Forwarder {
  const http = httpForwarder(socketPath);
  const framed = framesForwarder(framesSocketPath(socketPath));
  return (req, res, ip, requestId, route) => {
    const length = req.headers['content-length'];
    const small = req.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) <= FRAMED_BODY_MAX);
    return small && !route.serverWide ? framed(req, res, ip, requestId) : http(req, res, ip, requestId);
  };
}

function unavailable(res: ServerResponse): void {
  // The primary is gone or restarting; nothing was answered, so nothing is claimed durable.
  if (!res.headersSent) sendError(res, new ApiError('UNAVAILABLE', 'The writer process is not answering', { headers: { 'Retry-After': '1' } }));
  else if (!res.writableEnded) res.destroy();
}

interface Exchange {
  readonly res: ServerResponse;
  readonly done: () => void;
}

type Simple = (req: IncomingMessage, res: ServerResponse, ip: string, requestId: string) => Promise<void>;

function framesForwarder(path: string): Simple {
  let link: { socket: Socket; out: FrameWriter; open: Map<number, Exchange> } | undefined;
  let ids = 0;
  const connectLink = () => {
    const socket = connect(path);
    socket.setNoDelay(true);
    const out = new FrameWriter(socket);
    const reader = new FrameReader();
    const open = new Map<number, Exchange>();
    const l = { socket, out, open };
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const f of reader.push(chunk)) answer(open, f);
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.once('close', () => {
      if (link === l) link = undefined;
      // Everything in flight on it: unanswered ones get 503 (nothing claimed), begun ones are cut.
      for (const x of open.values()) {
        unavailable(x.res);
        x.done();
      }
      open.clear();
    });
    return l;
  };
  return (req, res, ip, requestId) =>
    new Promise<void>((done) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        chunks.push(c);
      });
      let sent: { l: NonNullable<typeof link>; id: number } | undefined;
      res.once('close', () => {
        if (!sent) return done(); // the client left while sending its body: nothing was forwarded
        if (sent.l.open.delete(sent.id)) {
          // The client left before its answer: the primary need not write one.
          if (!sent.l.socket.destroyed) sent.l.out.send(CANCEL, sent.id);
          done();
        }
      });
      req.once('error', () => undefined); // the client left mid-body: 'close' above ends it
      req.once('end', () => {
        if (res.destroyed) return;
        const l = (link ??= connectLink());
        const id = (ids = (ids + 1) >>> 0);
        l.open.set(id, { res, done });
        sent = { l, id };
        const meta: RequestMeta = { m: req.method ?? 'GET', u: req.url ?? '/', h: endToEnd(req.headers, ip, requestId) };
        l.out.send(REQUEST, id, JSON.stringify(meta), size === 0 ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      });
    });
}

function answer(open: Map<number, Exchange>, f: Frame): void {
  const x = open.get(f.id);
  if (!x) return; // its client left; the frame was on its way
  const { res } = x;
  if (f.type === ANSWER) {
    const meta = JSON.parse(f.meta) as AnswerMeta;
    res.writeHead(meta.s, meta.h as Record<string, OutgoingHttpHeader>);
    if (f.body.length >= LARGE_ANSWER || !meta.e) res.setTimeout(STALL_MS, () => res.destroy());
    if (!meta.e) {
      if (f.body.length > 0) res.write(f.body);
      return;
    }
    finish(open, f.id, x);
    res.end(f.body);
  } else if (f.type === DATA) res.write(f.body);
  else if (f.type === END) {
    finish(open, f.id, x);
    res.end(f.body);
  } else if (f.type === RESET) {
    finish(open, f.id, x);
    res.destroy();
  }
}

function finish(open: Map<number, Exchange>, id: number, x: Exchange): void {
  open.delete(id);
  x.done();
}

function endToEnd(headers: IncomingHttpHeaders, ip: string, requestId: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined && !HOP.has(k)) out[k] = v;
  }
  out['x-forwarded-for'] = ip;
  out['x-request-id'] = requestId;
  return out;
}

/** The HTTP/1.1 way: bodies streamed with backpressure, answers piped back. */
function httpForwarder(socketPath: string): Simple {
  // Kept-alive connections: a forwarded write costs one socket write and read, not a connect.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return (req, res, ip, requestId) =>
    new Promise<void>((done) => {
      const headers = endToEndOut(req.headers);
      headers['x-forwarded-for'] = ip;
      headers['x-request-id'] = requestId;
      let answered = false;
      const out = request({ socketPath, agent, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEndOut(answer.headers));
        answer.pipe(res, { end: false });
        answer.once('end', () => {
          answered = true;
          if (out.writableFinished) res.end();
          else answeredEarly(req, res, out);
          done();
        });
        answer.once('error', () => (res.destroy(), done()));
      });
      out.once('error', () => {
        if (answered) return; // the connection cut by answeredEarly: the answer is already whole
        unavailable(res);
        done();
      });
      res.once('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      req.pipe(out);
    });
}

/**
 * The primary answered before the request's body was all sent to it (a 413 on a Content-Length
 * past the limit, a 415, a 401…, while the client still sends). Node's HTTP client stops passing
 * its socket's 'drain' on once the answer is complete, so `req.pipe(out)` would wait forever with
 * the client's body unread and its kept-alive connection stalled until the keep-alive timeout
 * reset it (issue #24). What one process does instead (./linger.ts), done here where the client's
 * socket is: the answer is already written whole (its Content-Length), the rest of the body is
 * discarded here, bounded in time and size (past a bound the socket is closed), and the response
 * ends only once that is over. Discarding rather than answering `Connection: close`: closing while
 * the client still sends resets the connection (RST), and a client still writing may then lose the
 * answer it was sent — the same reason ./linger.ts ends the answer only after the drain; and a
 * drained connection stays kept alive, as on one process. The half-sent forwarded request cannot
 * be finished, so its connection to the primary is cut (never reused by the pool); the primary,
 * which answered, sees its client leave while it discards.
 */
function answeredEarly(req: IncomingMessage, res: ServerResponse, out: ClientRequest): void {
  req.unpipe(out);
  out.destroy();
  if (!bodyPending(req)) return void res.end();
  void drainRest(req).then(() => {
    if (!res.writableEnded && !res.destroyed) res.end();
  });
}
