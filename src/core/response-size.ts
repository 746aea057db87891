/**
 * `maxResponseBytes` (docs/reference/data.md "Bounds", default 8 MiB): a list answer or a stream payload whose
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
 * A lower bound of the UTF-8 JSON size of `value`: the lengths of its strings (a string of n
 * UTF-16 units takes at least n bytes) and one byte per other value; keys and punctuation are
 * not counted, which keeps the walk to one typeof per value (it runs on every read answer).
 * Stops once the bound passes `max`.
 */
export function jsonSizeAtLeast(value: unknown, max: number): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 1;
  let size = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && size <= max; i++) {
      const v = value[i];
      size += typeof v === 'string' ? v.length : typeof v === 'object' && v !== null ? jsonSizeAtLeast(v, max - size) : 1;
    }
    return size;
  }
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    size += typeof v === 'string' ? v.length : typeof v === 'object' && v !== null ? jsonSizeAtLeast(v, max - size) : 1;
    if (size > max) return size;
  }
  return size;
}

/** Exact check of serialized JSON: O(1) unless the text is within a factor 3 of `max`. */
export function checkJsonSize(json: string, max: number): void {
  if (json.length * 3 <= max) return;
  if (json.length > max || Buffer.byteLength(json) > max) throw responseTooLarge(max);
}

/**
 * Refuses data whose JSON would pass `max`, before it is serialized when the lower bound already
 * tells. Escapes, keys and punctuation can make JSON several times its lower bound, so data within
 * a factor 8 is serialized here to be sure (and a stream re-run is rarely that large).
 */
export function checkDataSize(data: unknown, max: number): void {
  const atLeast = jsonSizeAtLeast(data, max);
  if (atLeast > max) throw responseTooLarge(max);
  if (atLeast * 8 > max) checkJsonSize(JSON.stringify(data) ?? 'null', max);
}

/** `data`, after checkDataSize. */
export function checkedData<T>(data: T, max: number): T {
  checkDataSize(data, max);
  return data;
}
