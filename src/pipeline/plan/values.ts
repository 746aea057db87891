/**
 * Checks and normalizes client values against a column's kind (docs/reference/columns.md). Everything a client
 * sends passes through here before it is bound to SQL or compared in memory, so storage and the
 * live engine see one canonical JSON form: ISO-8601 timestamps with milliseconds, lowercase
 * emails, safe integers.
 */
import type { ColumnModel } from '../../core/model.js';
import { badRequest } from '../../core/errors.js';
import type { ScalarKind } from '../../define/columns.js';

const EMAIL = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const PHOTO_ID = /^ph_[0-9a-z]{16,32}$/;

/**
 * Characters that change how an address looks without changing much of what it is: zero-width
 * characters, bidirectional controls and marks, the BOM. They let one account pose as another in
 * the dashboard and in emails (docs/reference/auth.md), so addresses holding them are refused.
 */
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
];

function hasInvisible(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xad) continue;
    for (const [lo, hi] of INVISIBLE_RANGES) if (c >= lo && c <= hi) return true;
  }
  return false;
}

export function normalizeEmail(value: unknown, path: string): string {
  if (typeof value !== 'string') throw badRequest(path, 'must be a string');
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw badRequest(path, 'must be an email address');
  if (hasInvisible(email)) throw badRequest(path, 'must not contain invisible or text-direction characters');
  return email;
}

/**
 * The email a rule sees before the body's shape is checked (rules run first, docs/reference/
 * rules-and-hooks.md): trimmed and lowercased as it will be stored, '' when it is not a string.
 */
export function emailForRules(value: unknown): string {
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

export function normalizeTimestamp(value: unknown, path: string): string {
  let ms: number;
  if (typeof value === 'number' && Number.isSafeInteger(value)) ms = value;
  else if (typeof value === 'string' && ISO.test(value)) ms = Date.parse(value);
  else throw badRequest(path, 'must be an ISO-8601 timestamp or epoch milliseconds');
  const d = new Date(ms);
  if (Number.isNaN(d.getTime()) || ms < 0 || ms > 253402300799999) throw badRequest(path, 'is not a valid timestamp');
  return d.toISOString();
}

function scalar(kind: ScalarKind, value: unknown, path: string): unknown {
  switch (kind) {
    case 'text':
      if (typeof value !== 'string') throw badRequest(path, 'must be a string');
      return value;
    case 'integer':
      if (!Number.isSafeInteger(value)) throw badRequest(path, 'must be an integer');
      return value;
    case 'real':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(path, 'must be a number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw badRequest(path, 'must be true or false');
      return value;
  }
}

/** A list item for `has`, `add` and `remove`. */
export function normalizeItem(column: ColumnModel, value: unknown, path: string): unknown {
  return scalar(column.spec.of ?? 'text', value, path);
}

/** A non-null value for `column`, in canonical JSON form. Nullability is checked by callers. */
export function normalizeValue(column: ColumnModel, value: unknown, path: string): unknown {
  const spec = column.spec;
  switch (spec.kind) {
    case 'text':
    case 'id':
      return scalar('text', value, path);
    case 'email':
      return normalizeEmail(value, path);
    case 'integer':
      return scalar('integer', value, path);
    case 'real':
      return scalar('real', value, path);
    case 'boolean':
    case 'isVerified':
      return scalar('boolean', value, path);
    case 'timestamp':
    case 'createdAt':
    case 'updatedAt':
    case 'updatedWhen':
      return normalizeTimestamp(value, path);
    case 'list':
      if (!Array.isArray(value)) throw badRequest(path, 'must be an array');
      if (value.length > 10_000) throw badRequest(path, 'has too many items');
      return value.map((item, i) => normalizeItem(column, item, `${path}/${i}`));
    case 'json':
      return value;
    case 'photo':
      if (typeof value !== 'string' || !PHOTO_ID.test(value)) throw badRequest(path, 'must be a photo id');
      return value;
    case 'password':
      throw badRequest(path, 'cannot be set here');
  }
}

/** Like normalizeValue, but `null` is accepted for nullable columns. */
export function normalizeNullable(column: ColumnModel, value: unknown, path: string): unknown {
  if (value === null) {
    if (!column.spec.nullable) throw badRequest(path, 'cannot be null');
    return null;
  }
  return normalizeValue(column, value, path);
}
