/**
 * Assertions end-to-end tests share: the SPEC §2 error envelope.
 */
import { expect } from 'vitest';

/** Anything with a status and a parsed JSON body: a `Reply`, a photo answer, a stream answer. */
export interface Answered {
  status: number;
  json: any;
  text?: string;
}

/** The answer is `status` with the error envelope's `code` (SPEC §2). */
export function expectError(r: Answered, status: number, code: string): void {
  expect(r.status, r.text ?? JSON.stringify(r.json)).toBe(status);
  expect(r.json?.error?.code, r.text ?? JSON.stringify(r.json)).toBe(code);
}
