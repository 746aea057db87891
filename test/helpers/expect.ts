/**
 * Assertions end-to-end tests share: the docs/reference/conventions.md error envelope.
 */
import { expect } from 'vitest';

/** Anything with a status and a parsed JSON body: a `Reply`, a photo answer, a stream answer. */
export interface Answered {
  status: number;
  json: unknown;
  text?: string;
}

/** `error.code` of a parsed JSON answer, or undefined when it has none. */
export function errorCodeOf(json: unknown): unknown {
  if (typeof json !== 'object' || json === null || !('error' in json)) return undefined;
  const error = json.error;
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** The answer is `status` with the error envelope's `code` (docs/reference/conventions.md). */
export function expectError(r: Answered, status: number, code: string): void {
  expect(r.status, r.text ?? JSON.stringify(r.json)).toBe(status);
  expect(errorCodeOf(r.json), r.text ?? JSON.stringify(r.json)).toBe(code);
}
