/** Writing answers: the `{"data"}` envelope, 204s and the error envelope (docs/reference/conventions.md). */
import type { ServerResponse } from 'node:http';
import { type ApiError } from '../core/errors.js';
import { checkJsonSize, jsonSizeAtLeast, responseTooLarge } from '../core/response-size.js';
import { admitAnswer } from './large-answers.js';
import { endAfterBody } from './linger.js';

function sendJson(res: ServerResponse, status: number, json: string, headers?: Record<string, string> | null, bodyDone?: Promise<void>): void {
  if (headers) for (const k in headers) res.setHeader(k, headers[k]!);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  if (bodyDone) endAfterBody(res, json, bodyDone);
  else res.end(json);
}

export function sendData(res: ServerResponse, data: unknown, headers?: Record<string, string> | null): void {
  sendJson(res, 200, `{"data":${data === undefined ? 'null' : JSON.stringify(data)}}`, headers);
}

/**
 * A read's answer under `maxResponseBytes` (docs/reference/data.md). A list is refused on the cheap lower bound
 * before its string is built (measured: 5–9 µs for 50 rows, against ~90 µs to stringify them); a
 * single row is checked once built (O(1) when small). A string past V8's limit is too large too.
 */
export function sendDataCapped(res: ServerResponse, data: unknown, max: number, isList: boolean): void {
  if (isList && jsonSizeAtLeast(data, max) > max) throw responseTooLarge(max);
  let json: string;
  try {
    json = `{"data":${data === undefined ? 'null' : JSON.stringify(data)}}`;
  } catch (err) {
    if (err instanceof RangeError) throw responseTooLarge(max);
    throw err;
  }
  checkJsonSize(json, max);
  admitAnswer(res, json.length);
  sendJson(res, 200, json);
}

export function sendNoContent(res: ServerResponse, headers?: Record<string, string> | null): void {
  if (headers) for (const k in headers) res.setHeader(k, headers[k]!);
  res.writeHead(204);
  res.end();
}

/**
 * The error envelope. `bodyDone`, when the request body is still arriving: the answer goes out
 * now and the response ends once the rest was discarded (http/linger.ts), so the client reads it.
 */
export function sendError(res: ServerResponse, err: ApiError, bodyDone?: Promise<void>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // Every 503 says when to come back (docs/reference/errors.md), whoever raised it.
  const headers = err.status === 503 && err.headers?.['Retry-After'] === undefined ? { ...err.headers, 'Retry-After': '5' } : err.headers;
  sendJson(res, err.status, JSON.stringify(err.toJSON()), headers, bodyDone);
}
