/**
 * `maxResponseBytes` (SPEC §4 "Bounds", default 8 MiB): a list answer or a stream payload whose
 * JSON would exceed it is refused with 400 RESPONSE_TOO_LARGE. The decision is made on a cheap
 * lower bound of the JSON size before the string is built, and confirmed exactly only when the
 * data comes close; on small answers (the fast path) it costs one walk over the values.
 */
import { ApiError } from './errors.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export function responseTooLarge(max: number): ApiError {
  return new ApiError('RESPONSE_TOO_LARGE', `The answer would exceed ${max} bytes; ask for a smaller limit`);
}

/**
 * A lower bound of the UTF-8 JSON size of `value` (a string of n UTF-16 units takes at least n
 * bytes), walking no further once the bound passes `max`.
 */
export function jsonSizeAtLeast(value: unknown, max: number): number {
  let size = 0;
  const walk = (v: unknown): void => {
    if (size > max) return;
    if (typeof v === 'string') size += v.length + 2;
    else if (v === null || typeof v !== 'object') size += 1;
    else if (Array.isArray(v)) {
      size += 2;
      for (let i = 0; i < v.length && size <= max; i++) {
        if (i > 0) size++;
        walk(v[i]);
      }
    } else {
      size += 2;
      for (const k in v) {
        size += k.length + 3; // "k": (commas between members are not counted: a lower bound)
        walk((v as Record<string, unknown>)[k]);
        if (size > max) return;
      }
    }
  };
  walk(value);
  return size;
}

/** Exact check of serialized JSON: O(1) unless the text is within a factor 3 of `max`. */
export function checkJsonSize(json: string, max: number): void {
  if (json.length * 3 <= max) return;
  if (json.length > max || Buffer.byteLength(json) > max) throw responseTooLarge(max);
}

/**
 * Refuses data whose JSON would pass `max`, before it is serialized when the lower bound already
 * tells. Escapes can make JSON at most 6× its lower bound, so only data within that factor is
 * serialized here to be sure.
 */
export function checkDataSize(data: unknown, max: number): void {
  const atLeast = jsonSizeAtLeast(data, max);
  if (atLeast > max) throw responseTooLarge(max);
  if (atLeast * 6 > max) checkJsonSize(JSON.stringify(data) ?? 'null', max);
}

/** `data`, after checkDataSize. */
export function checkedData<T>(data: T, max: number): T {
  checkDataSize(data, max);
  return data;
}
