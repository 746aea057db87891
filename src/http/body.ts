/**
 * Request bodies: JSON only, bounded (docs/reference/conventions.md: 413 past the limit, read no further), and the
 * `body` query parameter of GET routes (docs/reference/conventions.md).
 */
import type { IncomingMessage } from 'node:http';
import { ApiError, badRequest } from '../core/errors.js';
import { drainRest } from './linger.js';

function tooLarge(): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE');
}

/**
 * A request whose body arrived whole before it was handled (the primary's end of the forward
 * frames, ./forward-exchange.ts) carries it here: read without the stream's events and promises.
 */
export const WHOLE_BODY = Symbol('whole body');

/** Reads the raw body, failing as soon as it passes `max` bytes. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > max) {
    drainRest(req); // discard the rest (bounded), so the client receives the 413 (docs/reference/conventions.md)
    return Promise.reject(tooLarge());
  }
  // HTTP/1.1 without a length or chunking has no body. HTTP/2 frames bodies itself and needs
  // neither header, so there the stream's end tells (at once for a request without DATA).
  if (declared === '0' || (declared === undefined && req.headers['transfer-encoding'] === undefined && req.httpVersionMajor !== 2)) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > max) {
        // Chunked bodies have no declared length: the limit is found while reading (docs/reference/conventions.md).
        failed = true;
        chunks.length = 0;
        drainRest(req);
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(size === 0 ? null : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => {
      if (!failed) reject(err);
    });
  });
}

/** The same answers as readBody's path (413 by declared or actual size, 400 when empty), with no promise. */
function wholeJson(req: IncomingMessage, body: Buffer, max: number): Record<string, unknown> {
  const declared = req.headers['content-length'];
  if ((declared !== undefined && Number(declared) > max) || body.length > max) throw tooLarge();
  if (body.length === 0) throw badRequest('', 'A JSON body is required');
  return parseJson(body.toString('utf8'), 'request body');
}

function parseJson(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('BAD_REQUEST', `The ${where} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ApiError('BAD_REQUEST', `The ${where} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The JSON of a GET's `body` query parameter; undefined when absent. */
function queryBody(search: string): Record<string, unknown> | undefined {
  if (!search) return undefined;
  const raw = onlyBody(search) ?? new URLSearchParams(search).get('body');
  if (raw === null) return undefined;
  return parseJson(raw, 'body query parameter');
}

/**
 * The value of a query that is exactly `body=…` (what the typed client and most callers send),
 * decoded without building a URLSearchParams: node's parser walks the string in JavaScript, a
 * character at a time, which cost more than the rest of the body's handling on a get (counted with
 * bench/get-instructions.ts). Decoded the same way (`+` is a space, then percent-decoding as
 * UTF-8); anything else, a malformed escape included, is undefined here and left to
 * URLSearchParams, which answers for it as before.
 */
function onlyBody(search: string): string | undefined {
  if (!search.startsWith('body=') || search.includes('&')) return undefined;
  const value = search.slice(5);
  if (!value.includes('%') && !value.includes('+')) return value;
  try {
    return decodeURIComponent(value.includes('+') ? value.replaceAll('+', ' ') : value);
  } catch {
    return undefined; // URIError: URLSearchParams keeps a malformed escape as it is
  }
}

/** `application/json` or `application/<anything>+json`, with or without parameters (RFC 6839). */
const JSON_TYPE = /^application\/(?:[a-z0-9!#$&^_.-]+\+)?json[ \t]*(?:;|$)/i;

/**
 * docs/reference/conventions.md: a JSON body must be declared as JSON. Anything else — text/plain, form types — is the
 * shape of a cross-site "simple request" that a browser sends without a CORS preflight, so it is
 * refused before the body is read. A request with no Content-Type at all is not a browser's.
 */
export function checkJsonContentType(contentType: string | undefined): void {
  if (contentType !== undefined && !JSON_TYPE.test(contentType)) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON with Content-Type: application/json');
}

/**
 * The JSON body of a request: the `body` query parameter for GETs, else the request body. A GET's
 * is answered without a promise (every GET /db request), so the lifecycle awaits only real reads.
 */
export function jsonBody(req: IncomingMessage, search: string, max: number): Record<string, unknown> | Promise<Record<string, unknown>> {
  if (req.method === 'GET') {
    const fromQuery = queryBody(search);
    if (fromQuery) return fromQuery;
  }
  checkJsonContentType(req.headers['content-type']);
  const whole = (req as { [WHOLE_BODY]?: Buffer })[WHOLE_BODY];
  if (whole !== undefined) return wholeJson(req, whole, max);
  return readBody(req, max).then((raw) => {
    if (!raw) throw badRequest('', 'A JSON body is required');
    return parseJson(raw.toString('utf8'), 'request body');
  });
}
