/** Writing answers: the `{"data"}` envelope, 204s and the error envelope (SPEC §2). */
import type { ServerResponse } from 'node:http';
import { type ApiError } from '../core/errors.js';
import { checkJsonSize, jsonSizeAtLeast, responseTooLarge } from '../core/response-size.js';
import { admitAnswer } from './large-answers.js';

export function sendJson(res: ServerResponse, status: number, json: string, headers?: Record<string, string> | null): void {
  if (headers) for (const k in headers) res.setHeader(k, headers[k]!);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

export function sendData(res: ServerResponse, data: unknown, headers?: Record<string, string> | null): void {
  sendJson(res, 200, `{"data":${data === undefined ? 'null' : JSON.stringify(data)}}`, headers);
}

/**
 * A read's answer under `maxResponseBytes` (SPEC §4): refused on the cheap lower bound before the
 * string is built, else checked exactly once built (O(1) for small answers).
 */
export function sendDataCapped(res: ServerResponse, data: unknown, max: number): void {
  if (jsonSizeAtLeast(data, max) > max) throw responseTooLarge(max);
  const json = `{"data":${data === undefined ? 'null' : JSON.stringify(data)}}`;
  checkJsonSize(json, max);
  admitAnswer(res, json.length);
  sendJson(res, 200, json);
}

export function sendNoContent(res: ServerResponse, headers?: Record<string, string> | null): void {
  if (headers) for (const k in headers) res.setHeader(k, headers[k]!);
  res.writeHead(204);
  res.end();
}

export function sendError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, err.status, JSON.stringify(err.toJSON()), err.headers);
}

/** Sets headers now, so that whatever answer follows (data or error) carries them. */
export function setHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const k in headers) res.setHeader(k, headers[k]!);
}
