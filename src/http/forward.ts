/**
 * A worker of `serve --workers` hands a request whole to the primary over a private Unix socket
 * (docs/reference/scaling.md): the request line, headers and body go through unchanged, the
 * client's address travels as the only `X-Forwarded-For` entry (the primary trusts it: nothing
 * but the workers can reach that socket, mode 0600), and the answer comes back byte for byte.
 * Writes on SQLite take this path because hooks run inside the one writer's transaction, so a
 * write cannot be shipped as a value; the whole lifecycle runs where the writer is.
 */
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { ApiError } from '../core/errors.js';
import { sendError } from './respond.js';

export type Forwarder = (req: IncomingMessage, res: ServerResponse, ip: string, requestId: string) => Promise<void>;

// Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection, not to the message.
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined && !HOP.has(k)) out[k] = v;
  }
  return out;
}

export function createForwarder(socketPath: string): Forwarder {
  // Kept-alive connections: a forwarded write costs one socket write and read, not a connect.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return (req, res, ip, requestId) =>
    new Promise<void>((done) => {
      const headers = endToEnd(req.headers);
      headers['x-forwarded-for'] = ip;
      headers['x-request-id'] = requestId;
      const out = request({ socketPath, agent, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.once('end', done);
        answer.once('error', () => (res.destroy(), done()));
      });
      out.once('error', () => {
        // The primary is gone or restarting; nothing was answered, so nothing is claimed durable.
        if (!res.headersSent) sendError(res, new ApiError('UNAVAILABLE', 'The writer process is not answering', { headers: { 'Retry-After': '1' } }));
        else res.destroy();
        done();
      });
      res.once('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      req.pipe(out);
    });
}
