/** Small shape checks for request bodies; each failure names its JSON pointer (docs/reference/conventions.md). */
import { badRequest } from '../../core/errors.js';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Unknown top-level keys are a 400, so a typo such as `orderBy` is not silently ignored. */
export function allowKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw badRequest(`/${key}`, `unknown field "${key}"`);
  }
}

export function optionalInt(body: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) throw badRequest(`/${key}`, `must be an integer from ${min} to ${max}`);
  return v as number;
}

export function requireArray(body: Record<string, unknown>, key: string, min: number, max: number): unknown[] {
  const v = body[key];
  if (v === undefined) throw badRequest(`/${key}`, `"${key}" is required`);
  if (!Array.isArray(v)) throw badRequest(`/${key}`, 'must be an array');
  if (v.length < min || v.length > max) throw badRequest(`/${key}`, `must hold ${min} to ${max} entries`);
  return v;
}

/** JSON pointer escaping (RFC 6901). */
export function pointer(...parts: (string | number)[]): string {
  return parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
