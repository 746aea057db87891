/**
 * Request validation compiled from route schemas (TypeBox's TypeCompiler: one generated function
 * per schema, built at start). A failed check is one 400 BAD_REQUEST listing where each problem
 * is, as JSON pointers into the body (docs/reference/conventions.md `details`).
 */
import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ApiError, type ErrorDetail } from '../core/errors.js';

/** Formats the document names. Loose on purpose: services normalize and check values fully. */
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => v.includes('@'));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));

/** Answers the value when valid; throws 400 with details otherwise. */
export type Validator = <T>(value: T) => T;

/** At most this many details in one answer: a hostile body cannot make the answer large. */
const MAX_DETAILS = 20;

/** `prefix` marks where the value came from: '' for the body, `query:` or `path:` otherwise. */
export function compileValidator(schema: TSchema, prefix: string): Validator {
  const check = TypeCompiler.Compile(schema);
  return <T>(value: T): T => {
    if (check.Check(value)) return value;
    const details: ErrorDetail[] = [];
    const seen = new Set<string>();
    for (const e of check.Errors(value)) {
      const path = prefix + e.path;
      if (seen.has(path)) continue;
      seen.add(path);
      details.push({ path, message: e.message });
      if (details.length === MAX_DETAILS) break;
    }
    const first = details[0] ?? { path: prefix, message: 'is invalid' };
    throw new ApiError('BAD_REQUEST', `${first.path || 'body'}: ${first.message}`, { details });
  };
}
